/** The one lazy-import helper (src/core/lazy-module.ts): one load however many ask, a failed one retried. */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { lazy } from "../src/core/lazy-module.ts";

describe("lazy", () => {
  it("loads once for every caller, those that ask at once included", async () => {
    let loads = 0;
    const load = lazy(() => {
      loads++;
      return Promise.resolve({ value: 7 });
    });
    const all = await Promise.all([load(), load(), load()]);
    assert.equal(loads, 1);
    assert.ok(all.every((m) => m === all[0]), "one module object");
    assert.equal(await load(), all[0]);
    assert.equal(loads, 1);
  });

  it("a load that failed is tried again by the next call, and its callers see the failure", async () => {
    let loads = 0;
    const load = lazy(() => {
      loads++;
      return loads === 1 ? Promise.reject(new Error("not there yet")) : Promise.resolve("ok");
    });
    const [a, b] = await Promise.allSettled([load(), load()]);
    assert.equal(a.status, "rejected");
    assert.equal(b.status, "rejected", "both asked the one failed load");
    assert.equal(loads, 1);
    assert.equal(await load(), "ok");
    assert.equal(loads, 2);
  });
});
