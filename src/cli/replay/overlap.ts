/**
 * How much a ranked list changed: overlap at a depth, and rank-biased overlap (Webber, Moffat and
 * Zobel, "A similarity measure for indefinite rankings", 2010), both from 0 (nothing shared) to 1
 * (the same list).
 *
 * Invariants:
 * - Identical lists score 1, two empty lists too; an empty list beside a non-empty one scores 0.
 * - A list counts each item once, at its first position.
 */

/**
 * The items both top-`depth` lists share, over the longer of the two: two identical lists score
 * 1 even when shorter than `depth` (a search with limit 8 has no tenth result).
 */
export function overlapAt(a: readonly string[], b: readonly string[], depth: number): number {
  const top = new Set(unique(a).slice(0, depth));
  const other = unique(b).slice(0, depth);
  const longer = Math.max(top.size, other.length);
  if (longer === 0) return 1;
  return other.filter((item) => top.has(item)).length / longer;
}

/**
 * Extrapolated rank-biased overlap, RBO_ext (equation 32 of the paper), for lists of any lengths:
 * the agreement seen to the end of the shorter list is taken to continue past it.
 */
export function rankBiasedOverlap(a: readonly string[], b: readonly string[], p: number): number {
  const [first, second] = [unique(a), unique(b)];
  const [short, long] = first.length <= second.length ? [first, second] : [second, first];
  const s = short.length;
  const l = long.length;
  if (l === 0) return 1;
  if (s === 0) return 0;
  const seenShort = new Set<string>();
  const seenLong = new Set<string>();
  /** X_d: items shared by the two lists' first d items (the short list whole once d > s). */
  let shared = 0;
  const overlapAtDepth: number[] = [0];
  for (let d = 1; d <= l; d++) {
    const fromLong = long[d - 1] as string;
    if (d <= s) {
      const fromShort = short[d - 1] as string;
      if (fromShort === fromLong) {
        shared++;
      } else {
        if (seenLong.has(fromShort)) shared++;
        if (seenShort.has(fromLong)) shared++;
      }
      seenShort.add(fromShort);
    } else if (seenShort.has(fromLong)) {
      shared++;
    }
    seenLong.add(fromLong);
    overlapAtDepth.push(shared);
  }
  const xs = overlapAtDepth[s] as number;
  const xl = overlapAtDepth[l] as number;
  let sum = 0;
  for (let d = 1; d <= l; d++) sum += ((overlapAtDepth[d] as number) / d) * p ** d;
  for (let d = s + 1; d <= l; d++) sum += ((xs * (d - s)) / (s * d)) * p ** d;
  return ((1 - p) / p) * sum + ((xl - xs) / l + xs / s) * p ** l;
}

function unique(list: readonly string[]): string[] {
  return [...new Set(list)];
}
