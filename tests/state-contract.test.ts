/**
 * The shared-state contract against the adapters that run here: memory, and a store kept in this
 * process shared by two guarded instances (the reference model of a shared store). Redis and
 * Durable Objects have suites of their own, which start their store (tests/state-redis.test.ts,
 * tests/workerd/state-durable-objects.test.ts).
 */
import { MemoryState } from "../src/state/memory-state.ts";
import { GuardedState } from "../src/state/guarded-state.ts";
import { stateContract } from "./support/state-contract.ts";
import { MemoryStore } from "../src/state/memory-store.ts";

const clocks = { now: () => performance.now(), wall: () => Date.now() };

stateContract({
  name: "memory",
  shared: false,
  make: () => {
    const state = new MemoryState(clocks);
    return Promise.resolve({ a: state, b: state, fresh: () => state, close: () => state.close() });
  },
});

stateContract({
  name: "a store in this process, through GuardedState",
  shared: true,
  make: () => {
    const store = new MemoryStore();
    const options = { ...clocks, timeoutMs: 250, secret: "s".repeat(32) };
    const a = new GuardedState(store, options);
    const b = new GuardedState(store, options);
    return Promise.resolve({
      a,
      b,
      fresh: () => new GuardedState(store, options),
      close: async () => {
        await a.close();
        await b.close();
      },
    });
  },
});
