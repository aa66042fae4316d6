/**
 * The article extraction benchmark's measure (docs/benchmarks.md, "Extraction"), written from its
 * description: a text is cut into word tokens (runs of Unicode letters, digits and underscores),
 * the tokens into overlapping shingles of four, and a prediction's shingles are matched against
 * the truth's as multisets. Each page's true positives, false positives and false negatives are
 * normalised to sum to 1, so a long article weighs no more than a short one; precision and recall
 * are averaged over pages, and F1 is the harmonic mean of those two averages.
 *
 * Boundary: arithmetic only; no I/O.
 */

/** Tokens per shingle: the benchmark's own choice. */
export const SHINGLE_TOKENS = 4;

export type PageCounts = { tp: number; fp: number; fn: number };

export type Scores = { f1: number; precision: number; recall: number; pages: number };

const TOKEN = /[\p{L}\p{N}_]+/gu;

function shingles(text: string): Map<string, number> {
  const tokens = text.match(TOKEN) ?? [];
  const counts = new Map<string, number>();
  // A text shorter than a shingle is one shingle of all its tokens; an empty text has none.
  const last = Math.max(1, tokens.length - SHINGLE_TOKENS + 1);
  for (let i = 0; i < last; i++) {
    const key = tokens.slice(i, i + SHINGLE_TOKENS).join(" ");
    if (key === "") continue;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

/** One page's counts, normalised to sum to 1 (all zero when both texts are empty). */
export function pageCounts(truth: string, predicted: string): PageCounts {
  const want = shingles(truth);
  const got = shingles(predicted);
  let tp = 0;
  let fp = 0;
  let fn = 0;
  for (const [key, n] of got) {
    const m = want.get(key) ?? 0;
    tp += Math.min(n, m);
    fp += Math.max(0, n - m);
  }
  for (const [key, m] of want) fn += Math.max(0, m - (got.get(key) ?? 0));
  const sum = tp + fp + fn;
  return sum > 0 ? { tp: tp / sum, fp: fp / sum, fn: fn / sum } : { tp, fp, fn };
}

function precision({ tp, fp, fn }: PageCounts): number {
  if (fp === 0 && fn === 0) return 1;
  return tp === 0 && fp === 0 ? 0 : tp / (tp + fp);
}

function recall({ tp, fp, fn }: PageCounts): number {
  if (fp === 0 && fn === 0) return 1;
  return tp === 0 && fn === 0 ? 0 : tp / (tp + fn);
}

const mean = (values: readonly number[]) =>
  values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;

/** Precision over pages that predicted something, recall over pages with a truth, and their F1. */
export function scores(pages: readonly PageCounts[]): Scores {
  const p = mean(pages.filter((c) => c.tp + c.fp > 0).map(precision));
  const r = mean(pages.filter((c) => c.tp + c.fn > 0).map(recall));
  return {
    f1: p + r === 0 ? 0 : (2 * p * r) / (p + r),
    precision: p,
    recall: r,
    pages: pages.length,
  };
}

/** One page's F1, for listing the pages an extractor does worst on. */
export function pageF1(counts: PageCounts): number {
  const p = precision(counts);
  const r = recall(counts);
  return p + r === 0 ? 0 : (2 * p * r) / (p + r);
}
