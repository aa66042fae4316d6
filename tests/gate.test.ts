/**
 * The gate (src/io/gate.ts): a place given back with a hold stays taken for that long, comes back
 * by itself, and comes back at the next acquire even when its timer never ran; and a search whose
 * attempts time out never has more requests open at the provider than its max_concurrency.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Semaphore } from "../src/io/gate.ts";
import { countingProvider } from "./support/counting-provider.ts";
import { gateway, search } from "./support/gateway.ts";

const never = new AbortController().signal;

describe("Semaphore", () => {
  it("a place released with a hold is not free until the hold has passed, then a waiter gets it", async () => {
    const gate = new Semaphore(1);
    const release = await gate.acquire(never);
    const started = performance.now();
    release(60);
    await gate.acquire(never);
    assert.ok(performance.now() - started >= 55, `granted after ${performance.now() - started} ms`);
  });

  it("a held place whose time has come is taken back by the next acquire, timer or not", async () => {
    const gate = new Semaphore(1);
    (await gate.acquire(never))(1);
    // Keep the event loop busy past the hold, so its timer cannot have run.
    const until = performance.now() + 5;
    while (performance.now() < until) { /* busy */ }
    let granted = false;
    void gate.acquire(never).then(() => (granted = true));
    await Promise.resolve();
    assert.equal(granted, true, "granted in the same turn: the acquire reclaimed the place itself");
  });

  it("releasing twice gives back one place", async () => {
    const gate = new Semaphore(1);
    const release = await gate.acquire(never);
    release();
    release();
    await gate.acquire(never);
    const second = new AbortController();
    const waiting = gate.acquire(second.signal);
    second.abort(new Error("no second place"));
    await assert.rejects(waiting, /no second place/);
  });
});

describe("searches under max_concurrency", () => {
  it("attempts that time out keep their place until their connection closed: never more open than max_concurrency", async () => {
    const provider = await countingProvider(1_000, () => ({
      status: 200,
      json: {
        schema_version: "tracefetch.provider-response.v1",
        provider: "slow",
        scope: "slow",
        candidates: [],
      },
    }));
    try {
      const app = gateway([{
        name: "slow",
        endpoint: provider.url,
        max_concurrency: 2,
        timeout_seconds: 0.3,
      }]);
      // Staggered, so a place a timed-out attempt frees goes at once to a waiter with time left.
      const searches = [];
      for (let i = 0; i < 24; i++) {
        searches.push(search(app, { q: `query ${i}`, timeout_ms: "2000" }));
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      await Promise.all(searches);
      assert.ok(provider.maxOpen() <= 2, `${provider.maxOpen()} requests open at once`);
      assert.ok(provider.received() >= 2, "the provider was asked");
    } finally {
      await provider.close();
    }
  });
});
