/**
 * One search of a corpus index, and what its `stats` action answers for a query: the ranking
 * options chosen by `npm run eval` (docs/quality.md), and the switch from an index's own
 * statistics to its score group's sums.
 */
import type { CollectionStats } from "../../src/protocol/collection-stats.ts";
import { MAX_STATS_TERM_CHARS, MAX_STATS_TERMS } from "../../src/protocol/limits.ts";
import type { CorpusIndex } from "./corpus-index.ts";
import {
  expandQuery,
  type Feedback,
  queryTerms,
  rank,
  type RankingModel,
  statisticsFor,
} from "./corpus-rank.ts";

export type Ranking = {
  /** English stemming of titles and text (src/core/terms/text-terms.ts); off for code-heavy or non-English corpora. */
  stemming: boolean;
  model: RankingModel;
  /** Off (null) unless asked: it is always off for a search that carries a score group's sums. */
  feedback: Feedback | null;
};

/**
 * The ranking the corpus provider ships: stemmed InExpB2, no feedback. Stemming brought BM25 from
 * 0.361 / 0.366 to 0.377 / 0.406 nDCG@10 (Cranfield / CISI), and InExpB2 reaches 0.391 / 0.430,
 * over the 0.38 / 0.40 asked; feedback scores higher on Cranfield but cannot run in a score group,
 * whose shards would each expand the query their own way (docs/decisions.md, "Corpus search").
 */
export const DEFAULT_RANKING: Ranking = { stemming: true, model: "dfr", feedback: null };

/**
 * RM3's options where feedback is turned on: 10 documents, 20 words, the original query weighing
 * half, as in the literature's usual setting; on Cranfield 20 documents and 30 words scored 0.002
 * more, within noise, so the usual setting stays.
 */
export const RM3: Feedback = { documents: 10, terms: 20, original_weight: 0.5 };

/** A hit, with the query words it matched and the terms (stems) they matched as. */
export type Found = { doc: number; score: number; matched: string[]; terms: string[] };

/**
 * The best `limit` documents for `query`, with the query words each matched. With `sums` (its score
 * group's statistics) the index scores as one shard of the group, and never expands the query.
 */
export function searchIndex(
  index: CorpusIndex,
  query: string,
  limit: number,
  ranking: Ranking,
  sums: CollectionStats | undefined,
): Found[] {
  const terms = queryTerms(index, query);
  const statistics = statisticsFor(index, sums);
  let hits = rank(index, terms, ranking.model, statistics);
  if (ranking.feedback !== null && sums === undefined && hits.length > 0) {
    hits = rank(
      index,
      expandQuery(index, terms, hits, ranking.feedback),
      ranking.model,
      statistics,
    );
  }
  return hits.slice(0, limit).map(({ doc, score }) => {
    const held = terms.filter((t) => index.holds(doc, t.term));
    return {
      doc,
      score,
      matched: [...new Set(held.map((t) => t.word))],
      terms: held.map((t) => t.term),
    };
  });
}

/**
 * What this index holds for the terms `query` reaches (as searchIndex would reach them, without
 * feedback), in the query's order: at most MAX_STATS_TERMS, each at most MAX_STATS_TERM_CHARS.
 */
export function indexStats(index: CorpusIndex, query: string): CollectionStats {
  const terms = queryTerms(index, query)
    .filter((t) => t.term.length <= MAX_STATS_TERM_CHARS)
    .flatMap(({ term }) => {
      const { df, cf } = index.frequencies(term);
      return df === 0 ? [] : [{ term, document_frequency: df, collection_frequency: cf }];
    })
    .slice(0, MAX_STATS_TERMS);
  return { document_count: index.documentCount, total_length: index.totalLength, terms };
}
