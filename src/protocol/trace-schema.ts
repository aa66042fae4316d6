/**
 * A search trace (docs/security.md, "Search traces"): what an opted-in gateway records of one
 * search so it can be replayed and measured later. Never a token, a snippet, a provider's error
 * text or a caller's `sub` in the clear; the query and the locators only non-public providers
 * found are HMAC-SHA-256 values unless the operator opts in to their text.
 */
import * as v from "valibot";
import {
  ATTEMPT_CODES,
  ATTEMPT_OUTCOMES,
  ENVELOPE_CODES,
  FETCH_FORMATS,
  SENSITIVITIES,
  SKIP_REASONS,
} from "./codes.ts";
import { SearchFiltersSchema } from "./search-filters.ts";
import { TRACE_BATCH_VERSION, TRACE_VERSION } from "./trace-version.ts";

const Int = v.pipe(v.number(), v.integer(), v.minValue(0));

export const TraceSchema = v.strictObject({
  schema_version: v.literal(TRACE_VERSION),
  request_id: v.string(),
  /** When the answer was ready (RFC 3339, UTC). */
  time: v.pipe(v.string(), v.isoTimestamp()),
  /** `text` only with TRACEFETCH_TRACE_RAW_QUERIES; `hmac` whenever a secret is set. */
  query: v.strictObject({ text: v.optional(v.string()), hmac: v.optional(v.string()) }),
  /** A token's `sub` only as its HMAC, and only when a secret is set. */
  caller: v.strictObject({ authenticated: v.boolean(), sub_hmac: v.optional(v.string()) }),
  /** The request as planned, without its query; `filters` only beside a raw query. */
  request: v.strictObject({
    scope: v.nullable(v.string()),
    providers: v.nullable(v.array(v.string())),
    limit: Int,
    tier: v.nullable(v.string()),
    timeout_ms: Int,
    filtered: v.boolean(),
    filters: v.optional(SearchFiltersSchema),
  }),
  code: v.picklist(["ok", "partial", "all_providers_failed"]),
  decision: v.strictObject({
    tier: v.nullable(v.string()),
    providers: v.array(v.string()),
    trimmed: v.array(v.strictObject({ provider: v.string(), cost_micros: Int })),
    skipped: v.array(v.strictObject({ provider: v.string(), reason: v.picklist(SKIP_REASONS) })),
    coalesced: v.boolean(),
  }),
  attempts: v.array(v.strictObject({
    provider: v.string(),
    sensitivity: v.picklist(SENSITIVITIES),
    outcome: v.picklist(ATTEMPT_OUTCOMES),
    code: v.picklist(ATTEMPT_CODES),
    latency_ms: Int,
    candidate_count: Int,
    cost_micros: Int,
    /** Answered from the cache: the provider was not contacted. */
    cached: v.optional(v.literal(true)),
  })),
  /**
   * The merged list in rank order: `locator` when a public provider found it (or with
   * TRACEFETCH_TRACE_RAW_LOCATORS), else `locator_hmac`, else neither (no secret to hash with).
   * `ranks` holds the page's 1-based rank in each `found_by` provider's list.
   */
  merged: v.array(v.strictObject({
    rank: v.pipe(Int, v.minValue(1)),
    locator: v.optional(v.string()),
    locator_hmac: v.optional(v.string()),
    found_by: v.array(v.string()),
    ranks: v.array(v.pipe(Int, v.minValue(1))),
  })),
  /** Merged entries were cut from the end to keep the trace under its cap (MAX_TRACE_BYTES). */
  truncated: v.boolean(),
});
export type Trace = v.InferOutput<typeof TraceSchema>;

/**
 * A fetched page's trace (docs/security.md, "Search traces"): who asked, the page's host, and how
 * the fetch ended. The URL itself (its path and query can name what a caller reads) only with
 * TRACEFETCH_TRACE_RAW_LOCATORS, else as its HMAC when a secret is set; never the page's text.
 */
export const FetchTraceSchema = v.strictObject({
  schema_version: v.literal(TRACE_VERSION),
  kind: v.literal("fetch"),
  request_id: v.string(),
  time: v.pipe(v.string(), v.isoTimestamp()),
  caller: v.strictObject({ authenticated: v.boolean(), sub_hmac: v.optional(v.string()) }),
  fetch: v.strictObject({
    /** The host of the page read (the final URL's), or of the URL asked for when none was read. */
    host: v.string(),
    url: v.optional(v.string()),
    url_hmac: v.optional(v.string()),
    format: v.picklist(FETCH_FORMATS),
    code: v.picklist(ENVELOPE_CODES),
    status_code: v.optional(Int),
    cached: v.boolean(),
    bytes: v.optional(Int),
    latency_ms: Int,
  }),
});
export type FetchTrace = v.InferOutput<typeof FetchTraceSchema>;

/** One sink write: a webhook's JWS payload, and what replay also reads as one line. */
export const TraceBatchSchema = v.strictObject({
  schema_version: v.literal(TRACE_BATCH_VERSION),
  traces: v.array(v.union([TraceSchema, FetchTraceSchema])),
});
