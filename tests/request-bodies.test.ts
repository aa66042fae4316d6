/**
 * Request bodies being read, in process: bounded per client address and in bytes across all of
 * them, and a refused body read on and dropped within its bounds so its refusal can arrive. The
 * same bounds over real sockets, on Node and Deno, are in tests/client-lockout.test.ts.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { MAX_REQUEST_BODY_BYTES } from "../src/protocol/limits.ts";
import { MAX_DRAINED_BODY_BYTES } from "../src/protocol/admission-limits.ts";
import { assertEnvelope, gateway } from "./support/gateway.ts";
import { answer, startServer, type TestServer } from "./support/servers.ts";

const CHUNK = 64 * 1024;
const encode = (text: string) => new TextEncoder().encode(text);

/** A body of `total` bytes in 64 KiB chunks, counting what was pulled of it. */
function counted(total: number) {
  const seen = { pulled: 0, ended: false };
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const size = Math.min(CHUNK, total - seen.pulled);
      if (size <= 0) {
        seen.ended = true;
        return controller.close();
      }
      seen.pulled += size;
      controller.enqueue(new Uint8Array(size).fill(0x20));
    },
  });
  return { body, seen };
}

/** A body that sends its first bytes and then nothing, until its read gives up on it. */
const stalled = () =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encode('{"query":'));
    },
  });

describe("request bodies being read", () => {
  let provider: TestServer;

  before(async () => {
    provider = await startServer(answer("notes", "notes", [{ title: "t", locator: "https://a/" }]));
  });
  after(() => provider.close());

  const app = (settings: Record<string, number>) =>
    gateway([{ name: "notes", endpoint: provider.url }], {
      settings,
      // Each request names its peer, as a runtime's port would.
      ports: { peerAddress: (request) => request.headers.get("x-test-peer") },
    });
  const post = (
    target: ReturnType<typeof app>,
    body: BodyInit,
    peer = "192.0.2.1",
  ) =>
    target.request("/v1/search", {
      method: "POST",
      headers: { "content-type": "application/json", "x-test-peer": peer },
      body,
      duplex: "half",
    } as RequestInit);

  it("a client at its limit of bodies in reading is refused 429 overloaded; another address is served meanwhile", async () => {
    const target = app({ maxBodiesInRead: 2, bodyTimeoutMs: 1_000 });
    const held = [post(target, stalled()), post(target, stalled())];
    await new Promise((resolve) => setTimeout(resolve, 50));
    const refused = await post(target, '{"query":"deadline"}');
    assert.equal(refused.status, 429);
    const envelope = assertEnvelope(await refused.json());
    assert.deepEqual([envelope.code, envelope.command, envelope.retryable], [
      "overloaded",
      "search",
      true,
    ]);
    assert.equal(refused.headers.get("retry-after"), "1");
    const other = await post(target, '{"query":"deadline"}', "192.0.2.2");
    assert.equal(other.status, 200);
    assert.equal(assertEnvelope(await other.json()).code, "ok");
    for (const late of await Promise.all(held)) assert.equal(late.status, 408);
    const again = await post(target, '{"query":"deadline"}');
    assert.equal(again.status, 200, "its places are given back when the reads end");
    await again.body?.cancel();
  });

  it("a body that would pass the bytes in reading is refused 429 overloaded with Retry-After; bytes are given back when a read ends", async () => {
    const target = app({ maxBodyBytesInRead: 64 });
    const small = JSON.stringify({ query: "deadline notes", limit: 5 });
    assert.ok(
      small.length * 2 > 64,
      "two bodies in a row would pass the bound if never given back",
    );
    for (let i = 0; i < 3; i++) {
      const res = await post(target, small);
      assert.equal(res.status, 200);
      await res.body?.cancel();
    }
    const large = await post(target, JSON.stringify({ query: "x".repeat(80) }));
    assert.equal(large.status, 429);
    assert.equal(large.headers.get("retry-after"), "1");
    const envelope = assertEnvelope(await large.json());
    assert.deepEqual([envelope.code, envelope.action], ["overloaded", "retry"]);
    assert.match(envelope.error.message, /request bytes being read/);
  });

  it(`an over-cap body of at most ${MAX_DRAINED_BODY_BYTES} bytes is read to its end and dropped before its 413, keeping its connection; a larger one is cancelled there, closing it`, async () => {
    const target = app({});
    const near = counted(MAX_REQUEST_BODY_BYTES + 1);
    const res = await post(target, near.body);
    assert.equal(res.status, 413);
    assert.equal(assertEnvelope(await res.json()).code, "body_too_large");
    assert.equal(near.seen.ended, true, "read to its end");
    assert.equal(res.headers.get("connection"), null);

    const huge = counted(8 * MAX_REQUEST_BODY_BYTES);
    const cut = await post(target, huge.body);
    assert.equal(cut.status, 413);
    assert.equal(assertEnvelope(await cut.json()).code, "body_too_large");
    assert.equal(cut.headers.get("connection"), "close");
    assert.equal(huge.seen.ended, false);
    assert.ok(
      huge.seen.pulled <= MAX_DRAINED_BODY_BYTES + 2 * CHUNK,
      `pulled ${huge.seen.pulled} bytes`,
    );
  });
});
