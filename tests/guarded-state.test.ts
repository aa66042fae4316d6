/**
 * GuardedState (src/state/guarded-state.ts) over the in-process store: what it adds to any store,
 * the mirror of healthy providers, the pace of retries while the store fails, and the digests that
 * are all a store learns of a search.
 */
import { describe, it } from "node:test";
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
