/** The one lazy-import helper (src/core/lazy-module.ts): one load however many ask, a failed one retried. */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { lazy } from "../src/core/lazy-module.ts";

const SRC = fileURLToPath(new URL("../src/", import.meta.url));

/** A dynamic import's promise kept by hand (`x ??= import(...)`) instead of by `lazy`. */
const KEPT_BY_HAND = /\?\?=\s*import\(/;

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

  it("is the only keeper of a module's load in src/: no file keeps an import() by hand", async () => {
    const entries = await readdir(SRC, { recursive: true, withFileTypes: true });
    const byHand: string[] = [];
    for (const entry of entries) {
      if (!entry.isFile() || !entry.name.endsWith(".ts")) continue;
      const path = join(entry.parentPath, entry.name);
      if (KEPT_BY_HAND.test(await readFile(path, "utf8"))) {
        byHand.push(relative(SRC, path).replaceAll("\\", "/"));
      }
    }
    assert.deepEqual(byHand, []);
  });
});
