/**
 * The provider exchange over a runtime's own fetch (src/io/provider-exchange.ts), on Node and
 * Deno alike: a body with a declared length is read whole, every other through the counting
 * reader, and both keep the cap, the search's budget and cancellation.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { gzipSync } from "node:zlib";
import { decodeUtf8 } from "../src/io/bounded-reader.ts";
import { ByteBudget } from "../src/io/byte-budget.ts";
import { exchangeOverFetch } from "../src/io/provider-exchange.ts";
import { type Handler, sleep, startServer } from "./support/servers.ts";

const post = exchangeOverFetch(globalThis.fetch);

async function exchange(handler: Handler, signal = new AbortController().signal) {
  const server = await startServer(handler);
  const answer = await post(server.url, { headers: {}, body: "{}", signal });
  return { server, answer };
}

/** Sends `body` with a Content-Length, as Hono's c.json and most servers do. */
const declared = (body: Buffer, headers: Record<string, string> = {}): Handler => (_req, res) => {
  res.writeHead(200, {
    "content-type": "application/json",
    "content-length": String(body.length),
    ...headers,
  });
  res.end(body);
};

describe("provider exchange over fetch", () => {
  it("a declared length within the cap is read whole and charged to the budget once", async () => {
    const body = Buffer.from(JSON.stringify({ text: "x".repeat(50_000) }));
    const { server, answer } = await exchange(declared(body));
    try {
      const budget = new ByteBudget(1_000_000);
      const read = await answer.read(100_000, budget);
      assert.ok(read.ok);
      assert.deepEqual(Buffer.from(read.bytes), body);
      assert.equal(budget.remaining, 1_000_000 - body.length);
    } finally {
      await server.close();
    }
  });

  it("a declared length the budget cannot afford is refused before it is read", async () => {
    const body = Buffer.alloc(50_000, "a");
    const { server, answer } = await exchange(declared(body));
    try {
      const budget = new ByteBudget(10_000);
      const read = await answer.read(100_000, budget);
      assert.deepEqual(read, { ok: false, reason: "budget_exceeded", read: 0 });
      assert.equal(budget.remaining, 10_000);
    } finally {
      await server.close();
    }
  });

  it("a declared length over the cap is counted and cut at the cap", async () => {
    const body = Buffer.alloc(300_000, "a");
    const { server, answer } = await exchange(declared(body));
    try {
      const read = await answer.read(100_000, null);
      assert.equal(read.ok, false);
      assert.ok(!read.ok && read.reason === "too_large" && read.read > 100_000);
    } finally {
      await server.close();
    }
  });

  it("a compressed body's Content-Length does not bound what it decodes to", async () => {
    const decoded = Buffer.alloc(3_000_000, "a");
    const body = gzipSync(decoded);
    assert.ok(body.length < 100_000);
    const { server, answer } = await exchange(declared(body, { "content-encoding": "gzip" }));
    try {
      const read = await answer.read(100_000, null);
      assert.equal(read.ok, false);
      assert.ok(!read.ok && read.reason === "too_large");
    } finally {
      await server.close();
    }
  });

  it("a body without a declared length goes through the counting reader", async () => {
    const text = JSON.stringify({ text: "y".repeat(20_000) });
    const { server, answer } = await exchange((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write(text.slice(0, 10_000));
      res.end(text.slice(10_000));
    });
    try {
      const budget = new ByteBudget(1_000_000);
      const read = await answer.read(100_000, budget);
      assert.ok(read.ok);
      assert.equal(new TextDecoder().decode(read.bytes), text);
      assert.equal(budget.remaining, 1_000_000 - Buffer.byteLength(text));
    } finally {
      await server.close();
    }
  });

  it("a declared body that dribbles is given up when the signal fires", async () => {
    const controller = new AbortController();
    let stop = false;
    const { server, answer } = await exchange(async (_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": "1000" });
      for (let i = 0; i < 1000 && !stop; i++) {
        res.write("a");
        await sleep(20);
      }
    }, controller.signal);
    try {
      const started = performance.now();
      setTimeout(() => controller.abort(new Error("deadline")), 100);
      await assert.rejects(answer.read(100_000, null));
      assert.ok(performance.now() - started < 2_000, "the read ended soon after the signal");
    } finally {
      stop = true;
      await server.close();
    }
  });
});

describe("strict UTF-8 decoding", () => {
  it("a failure, a BOM or a cut sequence in one body never carries over to the next", () => {
    const bytes = (...b: number[]) => new Uint8Array(b);
    assert.equal(decodeUtf8(bytes(0xef, 0xbb, 0xbf, 0x61)), "a");
    assert.equal(decodeUtf8(bytes(0xef, 0xbb, 0xbf, 0x62)), "b");
    assert.equal(decodeUtf8(bytes(0x61, 0xc3)), null);
    assert.equal(decodeUtf8(bytes(0xa9, 0x62)), null);
    assert.equal(decodeUtf8(bytes(0x63)), "c");
    assert.equal(decodeUtf8(bytes(0xff)), null);
    assert.equal(decodeUtf8(bytes(0xc3, 0xa9)), "é");
  });
});
