/**
 * The result of `tracefetch replay` (docs/cli.md): recorded searches run again against a manifest,
 * compared with what was recorded and, with judgments, measured as `npm run eval` measures.
 */
import * as v from "valibot";
import { ENVELOPE_CODES } from "./codes.ts";

const Int = v.pipe(v.number(), v.integer(), v.minValue(0));

const RankingMetricsSchema = v.strictObject({
  ndcg_10: v.number(),
  map_100: v.number(),
  recall_100: v.number(),
  mrr: v.number(),
  p_10: v.number(),
});

/** `tracefetch replay` (docs/cli.md): recorded searches run again against a manifest, compared. */
export const ReplayResultSchema = v.strictObject({
  traces: v.string(),
  manifest: v.string(),
  /** Traces read from the file, and how many of them were run again. */
  read: Int,
  replayed: Int,
  /** Why the others were not: a query kept only as its HMAC, or a line that is not a trace. */
  skipped: v.strictObject({ query_hashed: Int, unreadable: Int }),
  /** Means over the replayed searches (null when none was), and the providers that now fail. */
  overall: v.strictObject({
    overlap_at_10: v.nullable(v.number()),
    rbo: v.nullable(v.number()),
    providers_now_failing: v.array(v.strictObject({ provider: v.string(), searches: Int })),
  }),
  queries: v.array(v.strictObject({
    request_id: v.string(),
    query: v.string(),
    /** The replayed search's envelope code. */
    code: v.picklist(ENVELOPE_CODES),
    overlap_at_10: v.number(),
    rbo: v.number(),
    /**
     * Providers that succeeded when recorded and not now: `outcome` is the attempt's, or
     * `not_contacted` with the skip reason (or `not_in_manifest`) as `code`.
     */
    now_failing: v.array(
      v.strictObject({ provider: v.string(), outcome: v.string(), code: v.string() }),
    ),
  })),
  /** With --qrels: `npm run eval`'s figures for the recorded and the replayed lists. */
  metrics: v.optional(v.strictObject({
    queries: Int,
    recorded: v.nullable(RankingMetricsSchema),
    replayed: v.nullable(RankingMetricsSchema),
  })),
  /** With --baseline: every figure that fell by more than `threshold` since that replay. */
  baseline: v.optional(v.strictObject({
    file: v.string(),
    threshold: v.number(),
    drops: v.array(
      v.strictObject({
        figure: v.string(),
        baseline: v.number(),
        replayed: v.number(),
        drop: v.number(),
      }),
    ),
  })),
});

export type ReplayResult = v.InferOutput<typeof ReplayResultSchema>;
