/**
 * GuardedState (src/state/guarded-state.ts) over the in-process store: what it adds to any store,
 * the mirror of healthy providers, the pace of retries while the store fails, and the digests that
 * are all a store learns of a search.
 */
import { describe, it } from "node:test";
import { createHmac } from "node:crypto";
import assert from "node:assert/strict";
import { GuardedState } from "../src/state/guarded-state.ts";
import { MAX_MIRROR_AGE_MS, STORE_RETRY_MS } from "../src/protocol/state-limits.ts";
import { MemoryStore } from "../src/state/memory-store.ts";

const SECRET = "k".repeat(32);

function guarded(store: MemoryStore, secret = SECRET, now = () => performance.now()) {
  return new GuardedState(store, { timeoutMs: 100, secret, now, wall: () => Date.now() });
}

const failure = { kind: "attempt", verdict: { kind: "failure", waitMs: null } } as const;

describe("GuardedState", () => {
  it("a healthy provider's breaker is read once a second at most; a failing one on every read", async () => {
    let now = 0;
    const store = new MemoryStore();
    const state = guarded(store, SECRET, () => now);
    await state.breakers(["healthy", "failing"]);
    await state.stepBreaker("failing", failure, 1_000);
    const calls = store.calls;
    const read = state.breakers(["healthy"]);
    assert.ok(!(read instanceof Promise), "a mirrored read is answered in the same turn");
    assert.equal(store.calls, calls);
    await state.breakers(["failing"]);
    assert.equal(store.calls, calls + 1, "a provider with failures is read from the store");
    now += MAX_MIRROR_AGE_MS + 1;
    await state.breakers(["healthy"]);
    assert.equal(store.calls, calls + 2, "past a second, the store is read again");
  });

  it("while the store fails, one operation per STORE_RETRY_MS tries it; the rest answer at once", async () => {
    let now = 0;
    const store = new MemoryStore();
    const state = guarded(store, SECRET, () => now);
    store.mode = "down";
    await state.probeResult("health", "p", 1_000);
    const calls = store.calls;
    for (let i = 0; i < 10; i++) await state.probeResult("health", "p", 1_000);
    assert.equal(store.calls, calls, "no operation reached the store before the retry was due");
    assert.equal(state.status().fallbacks, 11);
    store.mode = "up";
    now += STORE_RETRY_MS;
    await state.probeResult("health", "p", 1_000);
    assert.equal(store.calls, calls + 1);
    assert.deepEqual(state.status(), { backend: "redis", state: "ok", fallbacks: 11 });
  });

  it("operations that arrive while one retries a failing store wait for it, and reach the store once it answers", async () => {
    let now = 0;
    const store = new MemoryStore();
    // A digest made at once, as on Node and Deno: the burst's calls reach the guard in one turn.
    const state = new GuardedState(store, {
      timeoutMs: 100,
      secret: SECRET,
      mac: (key, message) => createHmac("sha256", key).update(message).digest(),
      now: () => now,
      wall: () => Date.now(),
    });
    store.mode = "down";
    await state.logSearch("sub:a", { searches: { limit: 5, windowMs: 60_000 } });
    assert.equal(state.status().state, "degraded");
    store.mode = "up";
    now += STORE_RETRY_MS;
    const calls = store.calls;
    // A burst in one turn: the first tries the store, the others wait for what it finds.
    const ask = { searches: { limit: 5, windowMs: 60_000 } };
    const verdicts = await Promise.all(
      Array.from({ length: 8 }, () => state.logSearch("sub:a", ask)),
    );
    assert.equal(store.calls, calls + 8, "every one of the burst reached the store");
    assert.equal(state.status().fallbacks, 1, "none of the burst was answered from memory");
    assert.equal(verdicts.filter((v) => v.admitted).length, 5, "the store counted the burst");
  });

  it("an operation waits no longer than what is left of its search, and that does not judge the store", async () => {
    const store = new MemoryStore();
    store.mode = "hang";
    const state = new GuardedState(store, {
      timeoutMs: 5_000,
      secret: SECRET,
      now: () => performance.now(),
      wall: () => Date.now(),
    });
    const started = performance.now();
    const verdict = await state.logSearch(
      "sub:b",
      { searches: { limit: 5, windowMs: 60_000 } },
      50,
    );
    assert.deepEqual(verdict, { admitted: true }, "memory answered");
    assert.ok(performance.now() - started < 2_500, "cut at the search's budget, not the timeout");
    assert.deepEqual(state.status(), { backend: "redis", state: "ok", fallbacks: 1 });
    // No budget left: memory answers without asking the store.
    const calls = store.calls;
    await state.logSearch("sub:b", { searches: { limit: 5, windowMs: 60_000 } }, 0);
    assert.equal(store.calls, calls);
  });

  it("a store that hangs is cut off at the timeout and its answer is not waited for", async () => {
    const store = new MemoryStore();
    store.mode = "hang";
    const state = guarded(store);
    const started = performance.now();
    assert.equal(await state.leaseProbe("describe", "p", 1_000), true, "memory answered");
    const took = performance.now() - started;
    assert.ok(took >= 95 && took < 400, `took ${took} ms`);
    assert.deepEqual(state.status(), {
      backend: "redis",
      state: "degraded",
      reason: "the store did not answer within 100 ms",
      fallbacks: 1,
    });
  });

  it("a search reaches the store as an HMAC digest of its identity, which depends on the secret", async () => {
    const store = new MemoryStore();
    const identity = '{"request":{"query":"salary of alice"}}';
    for (const secret of [SECRET, "o".repeat(32)]) {
      const role = await guarded(store, secret).flight(identity);
      if (role?.kind === "lead") await role.end(null);
    }
    const [first, second] = store.flightKeys;
    assert.match(first ?? "", /^[0-9a-f]{64}$/);
    assert.notEqual(first, second, "another secret, another key");
    assert.ok(!store.flightKeys.some((k) => k.includes("alice")));
  });
});
