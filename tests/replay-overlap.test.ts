/**
 * Replay's measures of change: overlap at a depth and rank-biased overlap (RBO_ext, Webber et al.
 * 2010), checked against values worked out by hand.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { overlapAt, rankBiasedOverlap } from "../src/cli/replay/overlap.ts";

const close = (actual: number, expected: number) =>
  assert.ok(Math.abs(actual - expected) < 1e-12, `${actual} is not ${expected}`);

describe("overlap@k", () => {
  it("is 1 for the same list, however short, and for two empty lists", () => {
    assert.equal(overlapAt(["a", "b", "c"], ["a", "b", "c"], 10), 1);
    assert.equal(overlapAt([], [], 10), 1);
  });

  it("counts the shared items of the two tops over the longer top", () => {
    assert.equal(overlapAt(["a", "b", "c", "d"], ["d", "c", "x", "y"], 10), 0.5);
    assert.equal(overlapAt(["a", "b"], ["a", "b", "c", "d"], 10), 0.5);
    assert.equal(overlapAt(["a", "b", "c"], ["c", "b", "a"], 2), 0.5, "only the top 2 count");
    assert.equal(overlapAt(["a"], [], 10), 0);
  });

  it("counts a repeated item once", () => {
    assert.equal(overlapAt(["a", "a", "b"], ["a", "b"], 10), 1);
  });
});

describe("rank-biased overlap, p = 0.9", () => {
  it("is 1 for the same list and for a list that extends it, 0 for disjoint lists", () => {
    close(rankBiasedOverlap(["a", "b", "c"], ["a", "b", "c"], 0.9), 1);
    // RBO_ext takes the shorter list's agreement to continue past its end.
    close(rankBiasedOverlap(["a"], ["a", "b"], 0.9), 1);
    close(rankBiasedOverlap(["a", "b"], ["c", "d"], 0.9), 0);
    close(rankBiasedOverlap([], [], 0.9), 1);
    close(rankBiasedOverlap(["a"], [], 0.9), 0);
  });

  it("matches hand-worked values", () => {
    // X1 = 0, X2 = 2: (0.1/0.9)(2/2)(0.81) + (2/2)(0.81) = 0.09 + 0.81.
    close(rankBiasedOverlap(["a", "b"], ["b", "a"], 0.9), 0.9);
    // X1 = 1, X2 = 1: (0.1/0.9)(0.9 + 0.405) + (1/2)(0.81) = 0.145 + 0.405.
    close(rankBiasedOverlap(["a", "b"], ["a", "c"], 0.9), 0.55);
    // s = 1, l = 2, X1 = 0, X2 = 1: (0.1/0.9)(0.405) + (1/2)(0.81) = 0.045 + 0.405.
    close(rankBiasedOverlap(["b"], ["a", "b"], 0.9), 0.45);
  });

  it("is symmetric and falls as the lists part", () => {
    const base = ["a", "b", "c", "d", "e"];
    const swapped = ["a", "b", "c", "e", "d"];
    const late = ["a", "x", "c", "d", "e"];
    close(rankBiasedOverlap(base, late, 0.9), rankBiasedOverlap(late, base, 0.9));
    assert.ok(rankBiasedOverlap(base, swapped, 0.9) > rankBiasedOverlap(base, late, 0.9));
  });
});
