/**
 * What the gateway and a provider say to each other over HTTP (design 3.2). Version 1 is strict:
 * an unknown field, a missing `candidates` or another schema_version is a protocol error, never an
 * honest empty.
 */
import * as v from "valibot";
import { PROVIDER_ERROR_CODES, type ProviderErrorCode } from "./codes.ts";
import { MAX_LIMIT, MAX_QUERY_CHARS, MIN_LIMIT } from "./limits.ts";

export const PROVIDER_REQUEST_VERSION = "tracefetch.provider-request.v1";
export const PROVIDER_RESPONSE_VERSION = "tracefetch.provider-response.v1";
export const PROVIDER_ERROR_VERSION = "tracefetch.provider-error.v1";

export const ProviderRequestSchema = v.strictObject({
  schema_version: v.literal(PROVIDER_REQUEST_VERSION),
  action: v.literal("search"),
  query: v.pipe(v.string(), v.minLength(1), v.maxLength(MAX_QUERY_CHARS)),
  limit: v.pipe(v.number(), v.integer(), v.minValue(MIN_LIMIT), v.maxValue(MAX_LIMIT)),
});
export type ProviderRequest = v.InferOutput<typeof ProviderRequestSchema>;

/** A candidate as a provider sends it; the sanitiser bounds every field afterwards. */
export const WireCandidateSchema = v.strictObject({
  title: v.string(),
  locator: v.pipe(v.string(), v.minLength(1)),
  snippet: v.optional(v.nullable(v.string())),
  published_at: v.optional(v.nullable(v.string())),
  metadata: v.optional(v.record(v.string(), v.unknown())),
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

/** A failing provider's non-2xx body. Read leniently: when it does not match, the HTTP status decides. */
export const ProviderErrorSchema = v.object({
  schema_version: v.literal(PROVIDER_ERROR_VERSION),
  code: v.picklist(PROVIDER_ERROR_CODES),
  message: v.optional(v.string()),
  retry_after_ms: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
});
export type ProviderErrorBody = v.InferOutput<typeof ProviderErrorSchema>;

/** The HTTP status a provider answers with each error code (serveProvider, and in-process adapters). */
export const PROVIDER_ERROR_STATUS: Record<ProviderErrorCode, 400 | 429 | 500 | 501 | 503> = {
  invalid_request: 400,
  unsupported_action: 501,
  rate_limited: 429,
  search_failed: 500,
  adapter_unavailable: 503,
};
