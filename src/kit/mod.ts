/**
 * Kit: everything a provider author needs, published as `tracefetch-edge/kit`: the author contract
 * (SearchAdapter, ProviderError), serveProvider to answer the provider protocol (docs/protocol.md),
 * verifyGatewayToken to accept only the gateway, the upstream helper with the gateway's one status
 * table, the checks an answer and a configuration must pass, a Cloudflare Workers entry, and
 * conformance: calling an endpoint the way the gateway would and showing the evidence. The
 * Node-only helpers (a command line and a listener) are the kit's Node part, `tracefetch-edge/kit/node`
 * (src/kit/node/mod.ts).
 *
 * Boundary: the kit serves and checks one provider; it never plans, ranks or fuses, and it never
 * changes what the gateway accepts. Everything here runs on Workers: no Node module is reachable
 * from this file.
 *
 * Invariants:
 * - A provider served by serveProvider fails over HTTP exactly as its adapter fails in process:
 *   the same code, the same `retryable: false`, the same wait.
 * - Every conformance request has a deadline that covers connect, headers and body; no redirect is
 *   followed, no body is read past MAX_PROVIDER_BODY_BYTES, and a report keeps a bounded excerpt.
 * - No conformance case passes without a complete answer to judge.
 * - The caller's header values never appear in a report or a transcript, and the same exchanges
 *   give the same transcript, byte for byte.
 */

// The author contract and the wire it travels on.
export {
  type Evidence,
  type ExpandRequest,
  type HealthAnswer,
  type ProviderDescription,
  ProviderError,
  type ProviderErrorOptions,
  type SearchAdapter,
  type SearchAnswer,
} from "../protocol/provider-contract.ts";
export {
  checkActionAnswer,
  PROTOCOL_VERSIONS,
  PROVIDER_DESCRIBE_REQUEST_VERSION,
  PROVIDER_DESCRIBE_VERSION,
  PROVIDER_EXPAND_REQUEST_VERSION,
  PROVIDER_EXPAND_VERSION,
  PROVIDER_HEALTH_REQUEST_VERSION,
  PROVIDER_HEALTH_VERSION,
  PROVIDER_REFRESH_REQUEST_VERSION,
} from "../protocol/provider-actions.ts";
export {
  type CollectionStats,
  PROVIDER_STATS_REQUEST_VERSION,
  PROVIDER_STATS_VERSION,
  type TermStats,
} from "../protocol/collection-stats.ts";
export type { HealthCoverage, HealthStatus, ProviderAction } from "../protocol/codes.ts";
export type { ProviderErrorCode } from "../protocol/codes.ts";
export {
  PROVIDER_ERROR_VERSION,
  PROVIDER_REQUEST_VERSION,
  PROVIDER_RESPONSE_VERSION,
  type ProviderErrorBody,
  type ProviderRequest,
  type ProviderResponse,
  type WireCandidate,
} from "../protocol/provider-wire.ts";
export { ConfigError } from "../protocol/config-error.ts";
export {
  type AnswerCheck,
  type AnswerProblem,
  checkProviderAnswer,
} from "../protocol/check-provider-answer.ts";

// Serving a provider.
export * from "./serve-provider.ts";
export * from "./probe-health.ts";
export * from "./worker-entry.ts";
export * from "./check-config.ts";
export type { FetchHandler, Listen, Served } from "./listener.ts";
export {
  type GatewayTokenOptions,
  type VerifiedGatewayToken,
  verifyGatewayToken,
} from "../auth/verify-gateway-token.ts";

// Calling a third-party API, and failing the way the gateway's one table says.
export {
  baseUrlProblem,
  callJson,
  checkShape,
  GET_JSON,
  notJson,
  quote,
  type ReadRefusal,
  type Refusal,
  type RefusalReading,
  type Upstream,
  upstream,
  UPSTREAM_TIMEOUT_MS,
  type UpstreamRequest,
} from "../transport/upstream.ts";
export { commandFailure } from "./command-failure.ts";
export {
  failureFromStatus,
  type StatusDetails,
  type StatusMeaning,
} from "../transport/classify-status.ts";
export { parseRetryAfter } from "../io/retry-after.ts";
export { redact } from "../io/redact.ts";
export { concatBytes, decodeUtf8 } from "../io/bounded-reader.ts";

// Conformance.
export * from "./check-bounds.ts";
export * from "./conformance.ts";
export {
  CONFORMANCE_CASES,
  type ConformanceCaseName,
  type ConformanceResponse,
} from "./conformance-cases.ts";
export { DEFAULT_CONFORMANCE_QUERY } from "../protocol/limits.ts";
export * from "./format-transcript.ts";
