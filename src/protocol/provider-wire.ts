/**
 * What the gateway and a provider say to each other over HTTP (docs/protocol.md). Version 1 is strict:
 * an unknown field, a missing `candidates` or another schema_version is a protocol error, never an
 * honest empty.
 */
import * as v from "valibot";
import { PROVIDER_ERROR_CODES, type ProviderErrorCode } from "./codes.ts";
import { isRecord } from "./json-value.ts";
import { MAX_LIMIT, MAX_QUERY_CHARS, MIN_LIMIT } from "./limits.ts";
import { SearchFiltersSchema } from "./search-filters.ts";
import { CollectionStatsSchema } from "./collection-stats.ts";

export const PROVIDER_REQUEST_VERSION = "tracefetch.provider-request.v1";
export const PROVIDER_RESPONSE_VERSION = "tracefetch.provider-response.v1";
export const PROVIDER_ERROR_VERSION = "tracefetch.provider-error.v1";

/** What a provider's answer must be labelled: application/json or a +json type. */
export const JSON_CONTENT_TYPE = /^application\/(?:[a-z0-9.+-]*\+)?json\s*(?:;|$)/i;

export const ProviderRequestSchema = v.strictObject({
  schema_version: v.literal(PROVIDER_REQUEST_VERSION),
  action: v.literal("search"),
  query: v.pipe(v.string(), v.minLength(1), v.maxLength(MAX_QUERY_CHARS)),
  limit: v.pipe(v.number(), v.integer(), v.minValue(MIN_LIMIT), v.maxValue(MAX_LIMIT)),
  /**
   * The search's filters that this provider declared in `describe`, and only those; absent when it
   * declared none of the filters in use, so a provider that never declared one never sees the
   * field (docs/protocol.md, "Filters").
   */
  filters: v.optional(SearchFiltersSchema),
  /**
   * The statistics of the provider's score group, summed over the members that answered `stats`
   * for this search; only a provider that declared `stats` in `describe`, and answered it, ever
   * receives the field (docs/protocol.md, "Shards of one index: score_group").
   */
  collection_stats: v.optional(CollectionStatsSchema),
});
export type ProviderRequest = v.InferOutput<typeof ProviderRequestSchema>;

/**
 * A JSON object. `v.record` alone also takes an array and hands back `{"0": ...}`; this is the same
 * schema (so the JSON Schema generator still writes `type: object`, which refuses an array) with
 * the array refused before the record runs.
 */
function jsonObject() {
  const record = v.record(v.string(), v.unknown());
  const run: (typeof record)["~run"] = (dataset, config) => {
    if (!Array.isArray(dataset.value)) return record["~run"](dataset, config);
    v._addIssue(record, "type", dataset, config);
    return dataset as unknown as ReturnType<(typeof record)["~run"]>;
  };
  return Object.create(record, { "~run": { value: run } }) as typeof record;
}

/** A candidate as a provider sends it; the sanitiser bounds every field afterwards. */
export const WireCandidateSchema = v.strictObject({
  title: v.string(),
  locator: v.pipe(v.string(), v.minLength(1)),
  snippet: v.optional(v.nullable(v.string())),
  published_at: v.optional(v.nullable(v.string())),
  metadata: v.optional(jsonObject()),
});
export type WireCandidate = v.InferOutput<typeof WireCandidateSchema>;

export const ProviderResponseSchema = v.strictObject({
  schema_version: v.literal(PROVIDER_RESPONSE_VERSION),
  provider: v.string(),
  scope: v.string(),
  candidates: v.array(WireCandidateSchema),
  warnings: v.optional(v.array(v.string())),
});
export type ProviderResponse = v.InferOutput<typeof ProviderResponseSchema>;

/** A failing provider's non-2xx body, as a provider must send it; the gateway reads one with readProviderError. */
export const ProviderErrorSchema = v.object({
  schema_version: v.literal(PROVIDER_ERROR_VERSION),
  code: v.picklist(PROVIDER_ERROR_CODES),
  message: v.optional(v.string()),
  retry_after_ms: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  /**
   * False when trying again cannot help. Only false has an effect: it never makes a code that is
   * not retried retryable. Optional, so an older gateway, which reads the body field by field,
   * ignores it.
   */
  retryable: v.optional(v.boolean()),
});
export type ProviderErrorBody = v.InferOutput<typeof ProviderErrorSchema>;

/** What a provider-error body says, each field present only when it is valid on its own. */
export type ProviderErrorFields = {
  code?: ProviderErrorCode;
  message?: string;
  retry_after_ms?: number;
  retryable?: boolean;
};

/**
 * Reads a provider-error body field by field: one bad field (a negative `retry_after_ms`, a number
 * as `message`) costs only itself, never the code beside it. A body without our schema_version is
 * not a provider-error body at all: null, and the HTTP status decides.
 */
export function readProviderError(json: unknown): ProviderErrorFields | null {
  if (!isRecord(json) || json.schema_version !== PROVIDER_ERROR_VERSION) return null;
  const { code, message, retry_after_ms, retryable } = ProviderErrorSchema.entries;
  const fields: ProviderErrorFields = {};
  const c = v.safeParse(code, json.code);
  if (c.success) fields.code = c.output;
  const m = v.safeParse(message, json.message);
  if (m.success && m.output !== undefined) fields.message = m.output;
  const r = v.safeParse(retry_after_ms, json.retry_after_ms);
  if (r.success && r.output !== undefined) fields.retry_after_ms = r.output;
  const t = v.safeParse(retryable, json.retryable);
  if (t.success && t.output !== undefined) fields.retryable = t.output;
  return fields;
}

/** The HTTP status a provider answers with each error code (serveProvider). */
export const PROVIDER_ERROR_STATUS: Record<
  ProviderErrorCode,
  400 | 404 | 410 | 429 | 500 | 501 | 503
> = {
  invalid_request: 400,
  unsupported_action: 501,
  locator_unknown: 404,
  locator_expired: 410,
  rate_limited: 429,
  search_failed: 500,
  adapter_unavailable: 503,
};
