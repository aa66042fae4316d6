/**
 * On Workers the client address is CF-Connecting-IP, which Cloudflare's edge sets (Miniflare too,
 * unless a test sends its own): one address at its limit of bodies in reading locks out only
 * itself.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Miniflare } from "miniflare";
import { MAX_BODIES_IN_READ_PER_CLIENT } from "../../src/protocol/admission-limits.ts";
import { answer, startServer, type TestServer } from "../support/servers.ts";
import { assertEnvelope, manifestOf } from "../support/gateway.ts";
import { startWorker } from "./miniflare.ts";

/** The held bodies' deadline: they end by themselves soon after the test has seen what it needs. */
const BODY_TIMEOUT_MS = 2_000;

describe("the worker counts bodies in reading by CF-Connecting-IP", () => {
  let provider: TestServer;
  let mf: Miniflare;

  before(async () => {
    provider = await startServer(answer("a", "a", [{ title: "A", locator: "https://a.example/" }]));
    mf = await startWorker({
      TRACEFETCH_ALLOW_LOOPBACK: "1",
      TRACEFETCH_MANIFEST: JSON.stringify(manifestOf([{ name: "a", endpoint: provider.url }])),
      TRACEFETCH_BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS),
    });
  });
  after(async () => {
    await mf?.dispose();
    await provider?.close();
  });

  const post = (ip: string, body: BodyInit) =>
    mf.dispatchFetch("http://gateway.test/v1/search", {
      method: "POST",
      headers: { "content-type": "application/json", "cf-connecting-ip": ip },
      body: body as never,
      duplex: "half",
    });

  it("an address at its limit of bodies in reading is refused 429 overloaded; another address is served", async () => {
    const held = Array.from({ length: MAX_BODIES_IN_READ_PER_CLIENT }, () =>
      post(
        "203.0.113.7",
        new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode('{"query":'));
          },
        }),
      ));
    try {
      await new Promise((resolve) => setTimeout(resolve, 500));
      const refused = await post("203.0.113.7", '{"query":"a"}');
      assert.equal(refused.status, 429);
      assert.equal(assertEnvelope(await refused.json()).code, "overloaded");
      const served = await post("203.0.113.8", '{"query":"a"}');
      assert.equal(served.status, 200);
      assert.equal(assertEnvelope(await served.json()).code, "ok");
    } finally {
      for (const res of await Promise.all(held)) await res.body?.cancel();
    }
  });
});
