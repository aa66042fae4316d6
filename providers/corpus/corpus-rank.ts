/**
 * How the corpus provider ranks: a query's terms weighted, each matching document scored by a
 * probabilistic model over the collection's statistics (its own, or its score group's sums), and
 * optionally a second pass with the query expanded by relevance feedback. The figures behind each
 * choice are in docs/quality.md and docs/decisions.md ("Corpus search").
 */
import type { CollectionStats } from "../../src/protocol/collection-stats.ts";
import type { CorpusIndex } from "./corpus-index.ts";
import { expandsByPrefix, processTerm, stem, tokenize } from "../../src/core/terms/text-terms.ts";
import {
  type RankingModel,
  type Statistics,
  termScorer,
} from "../../src/core/terms/term-scores.ts";

export type { RankingModel };

/** RM3 relevance feedback: the query grows by the words of its best first-pass documents. */
export type Feedback = {
  /** First-pass documents the new words come from. */
  documents: number;
  /** Words added, the heaviest. */
  terms: number;
  /** The original query's share of the new one (0 to 1). */
  original_weight: number;
};

/**
 * A prefix completion counts half an exact match: it is a guess at the word being typed, and must
 * not outrank a page that has the word as written.
 */
const PREFIX_WEIGHT = 0.5;

/** One weighted query term, and the query's own word it came from (for snippets). */
export type QueryTerm = { term: string; weight: number; word: string };

/**
 * A query's terms with their weights, in the order they first appear: each word's term weighs as
 * often as it is written; the last word of a short query also reaches its completions.
 */
export function queryTerms(index: CorpusIndex, query: string): QueryTerm[] {
  const words = tokenize(query).flatMap((token) => processTerm(token) ?? []);
  const byTerm = new Map<string, QueryTerm>();
  const add = (term: string, weight: number, word: string) => {
    const known = byTerm.get(term);
    if (known === undefined) byTerm.set(term, { term, weight, word });
    else known.weight += weight;
  };
  words.forEach((word, i) => {
    add(index.stemming ? stem(word) : word, 1, word);
    if (!expandsByPrefix(word, i, words)) return;
    for (const term of index.completions(word)) add(term, PREFIX_WEIGHT, term);
  });
  return [...byTerm.values()];
}

function localStatistics(index: CorpusIndex): Statistics {
  return {
    documents: index.documentCount,
    averageLength: index.totalLength / Math.max(1, index.documentCount),
    of: (term) => index.frequencies(term),
  };
}

/**
 * The score group's sums, when they cover this index (a sum smaller than the index's own counts is
 * not a sum over it: the index's own are used). A term the sums leave out (past their term bound)
 * is estimated from the index's own frequencies, scaled to the group's size.
 */
export function statisticsFor(index: CorpusIndex, sums: CollectionStats | undefined): Statistics {
  const local = localStatistics(index);
  if (
    sums === undefined || sums.document_count < index.documentCount ||
    sums.total_length < index.totalLength || sums.document_count === 0
  ) {
    return local;
  }
  const terms = new Map(sums.terms.map((t) => [t.term, t]));
  const scale = sums.document_count / Math.max(1, index.documentCount);
  return {
    documents: sums.document_count,
    averageLength: sums.total_length / sums.document_count,
    of(term) {
      const own = index.frequencies(term);
      const summed = terms.get(term);
      if (summed === undefined || summed.document_frequency < own.df) {
        return { df: own.df * scale, cf: own.cf * scale };
      }
      return { df: summed.document_frequency, cf: summed.collection_frequency };
    },
  };
}

export type Hit = { doc: number; score: number };

/**
 * Every document holding a query term, best first (ties by document order), with its score: the
 * sum over the query's terms, in their order, of weight times the term's score.
 */
export function rank(
  index: CorpusIndex,
  terms: readonly QueryTerm[],
  model: RankingModel,
  statistics: Statistics,
): Hit[] {
  const scores = new Float64Array(index.documentCount);
  const seen = new Uint8Array(index.documentCount);
  const touched: number[] = [];
  for (const { term, weight } of terms) {
    const postings = index.postings(term);
    if (postings === undefined || weight <= 0) continue;
    const { df, cf } = statistics.of(term);
    const score = termScorer(model, statistics, Math.max(df, 1), Math.max(cf, 1));
    const { docs, tfs } = postings;
    for (let i = 0; i < docs.length; i++) {
      const doc = docs[i] as number;
      if (seen[doc] === 0) {
        seen[doc] = 1;
        touched.push(doc);
      }
      scores[doc] = (scores[doc] as number) +
        weight * score(tfs[i] as number, index.lengths[doc] as number);
    }
  }
  return touched
    .map((doc) => ({ doc, score: scores[doc] as number }))
    .filter((hit) => hit.score > 0)
    .sort((a, b) => b.score - a.score || a.doc - b.doc);
}

/**
 * RM3: the words of the best `documents` first-pass hits, each hit weighted by exp(score - best)
 * (the share of the evidence a likelihood would give it) and each word by its share of the hit's
 * length; the `terms` heaviest, normalised, mixed with the normalised original query.
 */
export function expandQuery(
  index: CorpusIndex,
  original: readonly QueryTerm[],
  hits: readonly Hit[],
  feedback: Feedback,
): QueryTerm[] {
  const top = hits.slice(0, feedback.documents);
  const best = top[0]?.score ?? 0;
  const weights = new Map<string, number>();
  for (const { doc, score } of top) {
    const share = Math.exp(score - best) / Math.max(1, index.lengths[doc] as number);
    for (const [term, tf] of index.vector(doc)) {
      weights.set(term, (weights.get(term) ?? 0) + share * tf);
    }
  }
  const added = [...weights]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, feedback.terms);
  const addedTotal = added.reduce((sum, [, w]) => sum + w, 0);
  const originalTotal = original.reduce((sum, t) => sum + t.weight, 0);
  if (addedTotal <= 0 || originalTotal <= 0) return [...original];
  const mixed = new Map<string, QueryTerm>();
  for (const t of original) {
    mixed.set(t.term, { ...t, weight: feedback.original_weight * t.weight / originalTotal });
  }
  for (const [term, w] of added) {
    const share = (1 - feedback.original_weight) * w / addedTotal;
    const known = mixed.get(term);
    if (known === undefined) mixed.set(term, { term, weight: share, word: term });
    else known.weight += share;
  }
  return [...mixed.values()];
}
