/**
 * The worker reads its bindings through the same configFromEnv as Node and Deno. It has no start
 * to stop, so a refused binding makes every request a 500 internal_error naming it.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Miniflare } from "miniflare";
import { answer, startServer, type TestServer } from "../support/servers.ts";
import { assertEnvelope, manifestOf } from "../support/gateway.ts";
import { startWorker } from "./miniflare.ts";

describe("the worker's bindings", () => {
  let provider: TestServer;
  let manifest: string;
  const workers: Miniflare[] = [];

  before(async () => {
    provider = await startServer(answer("a", "a", [{ title: "A", locator: "https://a.example/" }]));
    manifest = JSON.stringify(manifestOf([{ name: "a", endpoint: provider.url }]));
  });
  after(async () => {
    for (const mf of workers) await mf.dispose();
    await provider.close();
  });

  const start = async (bindings: Record<string, string>) => {
    const mf = await startWorker({ TRACEFETCH_MANIFEST: manifest, ...bindings });
    workers.push(mf);
    return async (path: string) => {
      const res = await mf.dispatchFetch(`http://gateway.test${path}`);
      return { status: res.status, body: assertEnvelope(await res.json()) };
    };
  };

  it("TRACEFETCH_ALLOW_LOOPBACK=true permits the manifest's loopback endpoint", async () => {
    const get = await start({ TRACEFETCH_ALLOW_LOOPBACK: "true" });
    const { status, body } = await get("/v1/search?q=a");
    assert.equal(status, 200);
    assert.equal(body.code, "ok");
  });

  it("TRACEFETCH_REQUIRE_AUTH=maybe: every request is a 500 internal_error naming the variable", async () => {
    const get = await start({ TRACEFETCH_ALLOW_LOOPBACK: "1", TRACEFETCH_REQUIRE_AUTH: "maybe" });
    for (const path of ["/v1/status", "/v1/search?q=a"]) {
      const { status, body } = await get(path);
      assert.equal(status, 500);
      assert.equal(body.code, "internal_error");
      assert.match(
        body.error.message,
        /TRACEFETCH_REQUIRE_AUTH must be one of 1\/true\/yes\/on or 0\/false\/no\/off, got "maybe"/,
      );
    }
  });
});
