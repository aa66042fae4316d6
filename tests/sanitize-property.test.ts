import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { bound } from "../src/core/sanitize.ts";
import { TRUNCATION_MARKER } from "../src/protocol/limits.ts";

/** The bounding rule of docs/protocol.md written plainly: collapse every whitespace run, trim, cut by code points. */
function reference(value: string, max: number): { text: string; cut: boolean } {
  const collapsed = value.replace(/\s+/g, " ").trim();
  const points = Array.from(collapsed);
  if (points.length <= max) return { text: collapsed, cut: false };
  return {
    text: points.slice(0, max - TRUNCATION_MARKER.length).join("").trimEnd() + TRUNCATION_MARKER,
    cut: true,
  };
}

const text = fc.string({
  unit: fc.constantFrom(
    "a",
    "b",
    "é",
    "😀",
    " ",
    "\t",
    "\n",
    "\r",
    "\u00a0",
    "\u2028",
    "\u3000",
    "\ufeff",
  ),
  maxLength: 80,
});

describe("property: bounding text", () => {
  it("the fast path gives exactly what collapsing, trimming and cutting by code points gives", () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 13, max: 60 }), (value, max) => {
        assert.deepEqual(bound(value, max), reference(value, max));
      }),
      { numRuns: 20_000, seed: 20261130 },
    );
  });
});
