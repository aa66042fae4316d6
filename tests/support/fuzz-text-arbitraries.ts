/**
 * The text generators of the provider-answer fuzz: short strings over awkward code units (astral,
 * combining, invisible, NUL, lone surrogates), long runs on either side of every text bound, and
 * texts carrying a planted secret; plus `pick`, the weighted choice every fuzz generator uses.
 */
import fc from "fast-check";
import { SECRETS } from "./fuzz-secrets.ts";

/** One of the arbitraries; a failing value shrinks across them towards the first, the simplest. */
export function pick<T>(
  ...arbs: Array<fc.Arbitrary<T> | fc.WeightedArbitrary<T>>
): fc.Arbitrary<T> {
  return fc.oneof({ withCrossShrink: true }, ...arbs);
}

const UNITS = [
  "a",
  "b",
  "Z",
  "0",
  "é",
  "😀",
  "𝒳",
  "\u0301",
  " ",
  "\t",
  "\n",
  "\r",
  "\u00a0",
  "\u2028",
  "\u3000",
  "\ufeff",
  "\u0000",
  '"',
  "\\",
  "<",
  "\ud800",
];

/** Lengths on either side of every text bound. */
const EDGES = [99, 100, 101, 299, 300, 301, 499, 500, 501, 999, 1_000, 1_001, 1_599, 1_600, 1_601];

export const shortText = fc.string({ unit: fc.constantFrom(...UNITS), maxLength: 24 });
export const longText = fc
  .tuple(
    fc.constantFrom(...UNITS),
    pick(fc.constantFrom(...EDGES), fc.integer({ min: 0, max: 2_200 })),
  )
  .map(([unit, n]) => unit.repeat(n));
export const plantedSecret = fc.constantFrom(...SECRETS.map((s) => s.planted));
export const secretText = fc
  .tuple(shortText, plantedSecret, shortText)
  .map(([before, secret, after]) => `${before} ${secret} ${after}`);
export const anyText = pick(
  { weight: 6, arbitrary: shortText },
  { weight: 2, arbitrary: longText },
  { weight: 2, arbitrary: secretText },
);
