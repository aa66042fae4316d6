import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Miniflare } from "miniflare";
import { answer, raw, startServer, type TestServer } from "../support/servers.ts";
import { assertEnvelope, manifestOf } from "../support/gateway.ts";
import { startWorker } from "./miniflare.ts";
import { collect } from "../support/streams.ts";

describe("the bundled worker in workerd", () => {
  let servers: TestServer[] = [];
  let mf: Miniflare;

  before(async () => {
    const a = await startServer(
      answer("a", "a", [{ title: "Shared", locator: "https://x.example/p" }, {
        title: "A only",
        locator: "https://a.example/1",
      }]),
    );
    const b = await startServer(
      answer("b", "b", [{ title: "Shared too", locator: "http://www.x.example/p/" }]),
    );
    const hang = await startServer(() => {});
    const huge = await startServer(raw(200, Buffer.alloc(3_000_000, 0x20)));
    const liar = await startServer(answer("someone-else", "liar", []));
    servers = [a, b, hang, huge, liar];
    mf = await startWorker({
      TRACEFETCH_ALLOW_LOOPBACK: "1",
      TRACEFETCH_MANIFEST: JSON.stringify(manifestOf([
        { name: "workspace", scope: "local" },
        { name: "a", endpoint: a.url },
        { name: "b", endpoint: b.url },
        { name: "hang", endpoint: hang.url, timeout_seconds: 0.5 },
        { name: "huge", endpoint: huge.url },
        { name: "liar", endpoint: liar.url },
      ])),
    });
  });
  after(async () => {
    await mf?.dispose();
    for (const s of servers) await s.close();
  });

  const get = async (path: string) => {
    const res = await mf.dispatchFetch(`http://gateway.test${path}`);
    return { res, body: assertEnvelope(await res.json()) };
  };

  it("fuses two providers on 127.0.0.1 into one entry found by both", async () => {
    const { res, body } = await get("/v1/search?q=p&providers=a,b");
    assert.equal(res.status, 200);
    assert.equal(body.code, "ok");
    assert.deepEqual(body.result.merged[0].found_by, ["a", "b"]);
    assert.deepEqual(body.result.merged[0].found_in, [{ candidate: 0, citation: 0 }, {
      candidate: 1,
      citation: 0,
    }]);
  });

  it("a provider that hangs past its timeout is a timeout, the others intact", async () => {
    const started = performance.now();
    const { body } = await get("/v1/search?q=p&providers=a,hang");
    assert.ok(performance.now() - started < 2_000);
    assert.equal(body.code, "partial");
    const hang = body.result.candidates[1];
    assert.deepEqual([hang.outcome, hang.code, hang.budget, hang.retryable], [
      "timeout",
      "timeout",
      "provider_timeout",
      true,
    ]);
    assert.equal(body.result.candidates[0].outcome, "success");
  });

  it("a body over the cap is a protocol error", async () => {
    const { body } = await get("/v1/search?q=p&providers=a,huge");
    const huge = body.result.candidates[1];
    assert.deepEqual([huge.outcome, huge.code, huge.retryable], [
      "provider_protocol_error",
      "body_too_large",
      false,
    ]);
  });

  it("an identity mismatch is a protocol error", async () => {
    const { body } = await get("/v1/search?q=p&providers=a,liar");
    assert.equal(body.result.candidates[1].code, "identity_mismatch");
  });

  it("a refused request contacts nobody", async () => {
    const before = servers[0]!.requests.length;
    const { res, body } = await get("/v1/search?q=p&limit=500");
    assert.equal(res.status, 400);
    assert.deepEqual([body.code, body.action, body.exit_code], [
      "limit_out_of_range",
      "fix_input",
      2,
    ]);
    assert.equal(servers[0]!.requests.length, before);
  });

  it("the workspace built-in searches the bundled docs corpus", async () => {
    const { body } = await get("/v1/search?q=deadline&scope=local");
    assert.equal(body.code, "ok");
    assert.ok(body.result.merged.length > 0);
    assert.equal(body.result.merged[0].evidence_state, "local-source-match");
    assert.match(body.result.merged[0].locator, /^docs\//);
  });
  it("streams NDJSON and SSE events in order, the fast provider first, done last", async () => {
    for (
      const [accept, format] of [["application/x-ndjson", "ndjson"], [
        "text/event-stream",
        "sse",
      ]] as const
    ) {
      const res = await mf.dispatchFetch("http://gateway.test/v1/search?q=p&providers=a,hang", {
        headers: { accept },
      });
      assert.equal(res.status, 200);
      const events = (await collect(res.body as unknown as ReadableStream<Uint8Array>, format))
        .map((a) => a.event)
        .filter((e) => e.event !== "heartbeat" && e.event !== "comment");
      assert.deepEqual(events.map((e) => e.event), [
        "plan",
        "provider",
        "provider",
        "merged",
        "done",
      ]);
      assert.equal(
        (events[1]!.attempt as { provider: string }).provider,
        "a",
        "the answering provider first",
      );
      assert.equal((events[2]!.attempt as { outcome: string }).outcome, "timeout");
      const { event: _event, ...done } = events[4]!;
      assert.equal(assertEnvelope(done).code, "partial");
    }
  });
});
