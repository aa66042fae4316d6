/**
 * Collection statistics for the shards of one index (docs/protocol.md, "Shards of one index:
 * score_group"): the optional `stats` action, which asks a provider what its collection holds for
 * a query's terms, and the sums over a score group that a search then carries to each member that
 * answered. A shard that scores with the sums scores as one index over the whole group would.
 */
import * as v from "valibot";
import { MAX_QUERY_CHARS, MAX_STATS_TERM_CHARS, MAX_STATS_TERMS } from "./limits.ts";

export const PROVIDER_STATS_REQUEST_VERSION = "tracefetch.provider-stats-request.v1";
export const PROVIDER_STATS_VERSION = "tracefetch.provider-stats.v1";

/** A count: a non-negative integer a sum over many shards still holds exactly. */
const count = () =>
  v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(Number.MAX_SAFE_INTEGER));

/** One term as the provider indexes it (stemmed, lowercased: its own analysis of the query). */
export const TermStatsSchema = v.strictObject({
  term: v.pipe(v.string(), v.minLength(1), v.maxLength(MAX_STATS_TERM_CHARS)),
  /** Documents that hold the term. */
  document_frequency: count(),
  /** Occurrences of the term in all documents, counted as the provider counts a document's length. */
  collection_frequency: count(),
});
export type TermStats = v.InferOutput<typeof TermStatsSchema>;

/** What one collection holds: its size, its length in terms, and each query term's frequencies. */
export const CollectionStatsSchema = v.strictObject({
  document_count: count(),
  total_length: count(),
  terms: v.pipe(v.array(TermStatsSchema), v.maxLength(MAX_STATS_TERMS)),
});
export type CollectionStats = v.InferOutput<typeof CollectionStatsSchema>;

export const StatsRequestSchema = v.strictObject({
  schema_version: v.literal(PROVIDER_STATS_REQUEST_VERSION),
  action: v.literal("stats"),
  /** The search's query, as the search itself will carry it. */
  query: v.pipe(v.string(), v.minLength(1), v.maxLength(MAX_QUERY_CHARS)),
});

export const StatsResponseSchema = v.strictObject({
  schema_version: v.literal(PROVIDER_STATS_VERSION),
  provider: v.string(),
  scope: v.string(),
  ...CollectionStatsSchema.entries,
});
export type StatsResponse = v.InferOutput<typeof StatsResponseSchema>;

/**
 * The stats answer an adapter's statistics make on the wire (serveProvider sends it; the gateway
 * checks an in-process adapter's as this document). Terms past MAX_STATS_TERMS, and terms longer
 * than MAX_STATS_TERM_CHARS, are left out: their documents score with the shard's own statistics.
 */
export function statsDocument(
  adapter: { name: string; scope: string },
  stats: CollectionStats,
): { [K in keyof StatsResponse]: unknown } {
  return {
    schema_version: PROVIDER_STATS_VERSION,
    provider: adapter.name,
    scope: adapter.scope,
    document_count: stats.document_count,
    total_length: stats.total_length,
    // Unchecked beyond the bounds: the answer's schema judges the rest.
    terms: Array.isArray(stats.terms)
      ? stats.terms
        .filter((t) => typeof t?.term !== "string" || t.term.length <= MAX_STATS_TERM_CHARS)
        .slice(0, MAX_STATS_TERMS)
      : stats.terms,
  };
}
