/**
 * The answer cache in workerd (docs/envelope.md, "Cached answers"): the hook, an extra module of
 * the worker loaded with the first search that may use it, keeps answers in the isolate's memory
 * when no TRACEFETCH_STATE namespace is bound; with one, answer-cache-durable-objects.test.ts.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Miniflare } from "miniflare";
import { startServer, type TestServer } from "../support/servers.ts";
import { manifestOf } from "../support/gateway.ts";
import { cachedProvider, searchesAt } from "../support/answer-cache-scenarios.ts";
import { startWorker } from "./miniflare.ts";

describe("the answer cache in workerd", () => {
  let open: TestServer;
  let failing: TestServer;
  let mf: Miniflare;

  before(async () => {
    open = await startServer(cachedProvider("open"));
    failing = await startServer((_req, res) => {
      res.writeHead(503, { "content-type": "application/json" });
      res.end("{}");
    });
    mf = await startWorker({
      TRACEFETCH_ALLOW_LOOPBACK: "1",
      TRACEFETCH_DESCRIBE_PROVIDERS: "0",
      TRACEFETCH_MANIFEST: JSON.stringify(manifestOf([
        { name: "open", endpoint: open.url, cache_ttl_seconds: 600, cost_micros: 5 },
        { name: "failing", endpoint: failing.url, cache_ttl_seconds: 600 },
      ])),
    });
  });
  after(async () => {
    await mf?.dispose();
    await open?.close();
    await failing?.close();
  });

  // deno-lint-ignore no-explicit-any
  const search = async (query: string): Promise<any> => {
    const res = await mf.dispatchFetch(`http://gateway.test/v1/search?${query}`);
    return await res.json();
  };

  it("without the binding, a repeat is answered from the isolate's memory; max_age_seconds=0 asks again", async () => {
    const first = await search("q=w&providers=open");
    assert.equal(first.code, "ok");
    assert.equal(first.result.candidates[0].cached, undefined);
    const again = await search("q=w&providers=open");
    assert.equal(again.result.candidates[0].cached, true);
    assert.deepEqual(again.result.usage, { cost_micros: 0, saved_cost_micros: 5 });
    assert.equal(searchesAt(open), 1);
    await search("q=w&providers=open&max_age_seconds=0");
    assert.equal(searchesAt(open), 2);
  });

  it("a failing answer is never served from the cache", async () => {
    for (let i = 0; i < 3; i++) {
      const body = await search("q=f&providers=failing");
      assert.equal(body.result.candidates[0].cached, undefined);
    }
    assert.equal(searchesAt(failing), 3);
  });
});
