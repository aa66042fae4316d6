/**
 * The score one query term gives one document, by the probabilistic models the corpus provider
 * ranks with; the corpus index and a fetched page's passages both sum these over a query's terms.
 * The figures behind each choice are in docs/quality.md and docs/decisions.md ("Corpus search").
 */

/**
 * `dfr`: divergence from randomness, InExpB2 (Amati and van Rijsbergen): 0.391 / 0.430 nDCG@10 on
 * Cranfield / CISI stemmed, against 0.377 / 0.406 for BM25. `bm25`: Robertson's BM25.
 */
export type RankingModel = "dfr" | "bm25";

/** InExpB2's length normalisation c: 0.5 scored as well as 0.4 to 0.7 on Cranfield; CISI agreed. */
const DFR_C = 0.5;
/** BM25's k1 and b, Robertson's values: the ones the corpus provider always shipped. */
const BM25_K1 = 1.2;
const BM25_B = 0.75;

/** The collection a score is relative to: its size, its mean length, and each term's counts. */
export type Statistics = {
  documents: number;
  averageLength: number;
  /** In how many documents a term occurs (`df`) and how often in all (`cf`). */
  of(term: string): { df: number; cf: number };
};

/** The score of one term's frequency `tf` in a document of length `length`. */
export function termScorer(
  model: RankingModel,
  s: Statistics,
  df: number,
  cf: number,
): (tf: number, length: number) => number {
  const n = s.documents;
  if (model === "bm25") {
    const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
    return (tf, length) =>
      idf * tf * (BM25_K1 + 1) /
      (tf + BM25_K1 * (1 - BM25_B + BM25_B * length / s.averageLength));
  }
  // InExpB2: the expected document frequency of a term spread at random, and Bernoulli's after-effect.
  const expected = n * (1 - Math.pow((n - 1) / n, cf));
  const idf = Math.log2((n + 1) / (expected + 0.5));
  const gain = (cf + 1) / df;
  return (tf, length) => {
    const tfn = tf * Math.log2(1 + DFR_C * s.averageLength / length);
    return tfn * idf * gain / (tfn + 1);
  };
}
