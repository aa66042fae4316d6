/**
 * The shared-state contract against the adapters that run here: memory always; Redis and Durable
 * Objects have suites of their own, which start their store (tests/state-redis.test.ts,
 * tests/workerd/state-durable-objects.test.ts).
 */
import { MemoryState } from "../src/state/memory-state.ts";
import { stateContract } from "./support/state-contract.ts";

stateContract({
  name: "memory",
  shared: false,
  make: () => {
    const state = new MemoryState({ now: () => performance.now(), wall: () => Date.now() });
    return Promise.resolve({ a: state, b: state, close: () => state.close() });
  },
});
