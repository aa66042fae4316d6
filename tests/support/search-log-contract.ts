/**
 * The shared-state contract's cases for callers' search logs (src/core/search-log.ts), run by
 * stateContract (state-contract.ts) against every adapter: the searches a window admits, the cost
 * it admits, both limits logged together or not at all, and exactness across two instances.
 */
import { it } from "node:test";
import assert from "node:assert/strict";
import { CALLER_COST_BUCKET_MS } from "../../src/protocol/limits.ts";
import type { SharedState } from "../../src/state/shared-state.ts";

/** A caller's search window here: short, so a refused caller's wait can be waited out. */
const LOG_WINDOW_MS = 500;
/** A caller's limits as the cases ask for them, over a window of 10 s. */
const searches = (limit: number) => ({ searches: { limit, windowMs: 10_000 } });
const cost = (limit: number, micros: number) => ({ cost: { limit, windowMs: 10_000, micros } });

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
/** A caller of its own for each case. */
const fresh = () => `c-${Math.random().toString(36).slice(2, 10)}`;

/** `current()`: two instances over one store (for the memory adapter, one instance twice). */
export function searchLogCases(current: () => { a: SharedState; b: SharedState }): void {
  it("a caller's log admits its limit in a window, then refuses with the wait for the oldest", async () => {
    const caller = `sub:${fresh()}`;
    const verdicts = [];
    for (let i = 0; i < 4; i++) verdicts.push(await current().a.logSearch(caller, searches(3)));
    assert.deepEqual(verdicts.slice(0, 3), Array(3).fill({ admitted: true }));
    const refused = verdicts[3];
    assert.equal(refused?.admitted === false && refused.limit, "searches_per_minute");
    const wait = refused?.admitted === false ? refused.retryAfterMs : -1;
    assert.ok(wait > 9_000 && wait <= 10_000, `wait ${wait} ms`);
    // Another caller's log is its own.
    assert.deepEqual(await current().b.logSearch(`sub:${fresh()}`, searches(3)), {
      admitted: true,
    });
  });

  it("a caller refused is admitted again once its oldest search left the window", async () => {
    const caller = `client:${fresh()}`;
    const ask = { searches: { limit: 1, windowMs: LOG_WINDOW_MS } };
    assert.deepEqual(await current().a.logSearch(caller, ask), { admitted: true });
    const refused = await current().b.logSearch(caller, ask);
    assert.equal(refused.admitted, false);
    const wait = refused.admitted ? 0 : refused.retryAfterMs;
    assert.ok(wait > 0 && wait <= LOG_WINDOW_MS, `wait ${wait} ms`);
    await sleep(wait + 50);
    assert.deepEqual(await current().b.logSearch(caller, ask), { admitted: true });
  });

  it("30 concurrent searches of one caller across two instances: exactly its limit of 10 pass", async () => {
    const caller = `sub:${fresh()}`;
    const verdicts = await Promise.all(
      Array.from(
        { length: 30 },
        (_, i) => (i % 2 === 0 ? current().a : current().b).logSearch(caller, searches(10)),
      ),
    );
    assert.equal(verdicts.filter((v) => v.admitted).length, 10);
  });

  it("a caller's cost admits searches while the window's sum fits the limit, then waits for a minute to leave", async () => {
    const caller = `sub:${fresh()}`;
    const costing = (micros: number) => current().a.logSearch(caller, cost(100, micros));
    assert.deepEqual(await costing(40), { admitted: true });
    assert.deepEqual(await current().b.logSearch(caller, cost(100, 40)), { admitted: true });
    const refused = await costing(40);
    assert.equal(refused.admitted === false && refused.limit, "cost_micros_per_day");
    const wait = refused.admitted ? -1 : refused.retryAfterMs;
    // The cost leaves with its minute: a window and at most a minute after it was admitted.
    assert.ok(wait > 9_000 && wait <= 10_000 + CALLER_COST_BUCKET_MS, `wait ${wait} ms`);
    assert.deepEqual(await costing(20), { admitted: true }, "exactly the limit fits");
    assert.deepEqual(await costing(0), { admitted: true }, "a search that costs nothing fits");
    assert.equal((await costing(1)).admitted, false);
    const never = await current().b.logSearch(`sub:${fresh()}`, cost(100, 101));
    assert.deepEqual(never, {
      admitted: false,
      limit: "cost_micros_per_day",
      retryAfterMs: 10_000,
    });
  });

  it("with both limits, a search is logged in both or in neither, and the longer wait is told", async () => {
    const caller = `sub:${fresh()}`;
    const both = (micros: number) => ({ ...searches(2), ...cost(100, micros) });
    assert.deepEqual(await current().a.logSearch(caller, both(90)), { admitted: true });
    const tooDear = await current().b.logSearch(caller, both(20));
    assert.equal(tooDear.admitted === false && tooDear.limit, "cost_micros_per_day");
    // The refusal was not counted: one place is left for a search that fits.
    assert.deepEqual(await current().a.logSearch(caller, both(10)), { admitted: true });
    const full = await current().b.logSearch(caller, both(0));
    assert.equal(full.admitted === false && full.limit, "searches_per_minute");
    const longer = await current().b.logSearch(caller, both(50));
    assert.equal(longer.admitted === false && longer.limit, "cost_micros_per_day");
  });

  it("30 concurrent searches across two instances, 10 micros each under 100: exactly 10 pass", async () => {
    const caller = `sub:${fresh()}`;
    const verdicts = await Promise.all(
      Array.from(
        { length: 30 },
        (_, i) => (i % 2 === 0 ? current().a : current().b).logSearch(caller, cost(100, 10)),
      ),
    );
    assert.equal(verdicts.filter((v) => v.admitted).length, 10);
  });
}
