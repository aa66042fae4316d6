/**
 * Ranks a handful of texts held in memory against a query, as the corpus provider ranks its
 * documents (stemmed terms, stopwords dropped, InExpB2 over the texts' own statistics): the
 * passages of a fetched page are ranked with it.
 */
import { type RankingModel, type Statistics, termScorer } from "./term-scores.ts";
import { processTerm, stem, termsOf, tokenize } from "./text-terms.ts";

export type RankedText = { index: number; score: number };

/**
 * Every text holding a query term, best first (ties by their order), with its score: the sum over
 * the query's distinct terms of how often the query names the term times the term's score. The
 * texts are the collection: a term in every one of them says little about any.
 */
export function rankTexts(
  texts: readonly string[],
  query: string,
  model: RankingModel = "dfr",
): RankedText[] {
  const weights = new Map<string, number>();
  for (const token of tokenize(query)) {
    const word = processTerm(token);
    if (word !== null) weights.set(stem(word), (weights.get(stem(word)) ?? 0) + 1);
  }
  if (weights.size === 0 || texts.length === 0) return [];
  const counts = texts.map((text) => {
    const tf = new Map<string, number>();
    const terms = termsOf(text, true);
    for (const term of terms) if (weights.has(term)) tf.set(term, (tf.get(term) ?? 0) + 1);
    return { tf, length: terms.length };
  });
  const totals = new Map<string, { df: number; cf: number }>();
  for (const { tf } of counts) {
    for (const [term, n] of tf) {
      const t = totals.get(term) ?? { df: 0, cf: 0 };
      totals.set(term, { df: t.df + 1, cf: t.cf + n });
    }
  }
  const totalLength = counts.reduce((sum, c) => sum + c.length, 0);
  const statistics: Statistics = {
    documents: texts.length,
    averageLength: Math.max(1, totalLength / texts.length),
    of: (term) => totals.get(term) ?? { df: 0, cf: 0 },
  };
  const scorers = new Map(
    [...totals].map(([term, { df, cf }]) => [term, termScorer(model, statistics, df, cf)]),
  );
  const ranked: RankedText[] = [];
  counts.forEach(({ tf, length }, index) => {
    let score = 0;
    for (const [term, n] of tf) {
      score += (weights.get(term) ?? 0) * (scorers.get(term) as (tf: number, l: number) => number)(
        n,
        Math.max(1, length),
      );
    }
    if (score > 0) ranked.push({ index, score });
  });
  return ranked.sort((a, b) => b.score - a.score || a.index - b.index);
}
