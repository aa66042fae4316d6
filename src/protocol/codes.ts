/**
 * Closed code lists. Adding a value here is a contract change: the envelope table, the docs and
 * the JSON Schemas all follow from these arrays.
 */

/** How one attempt of one provider ended (docs/envelope.md, "The search result"). */
export const ATTEMPT_OUTCOMES = [
  "success",
  "timeout",
  "adapter_unavailable",
  "search_failed",
  "provider_protocol_error",
  "skipped",
  "cancelled",
] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

/** The precise reason inside an outcome; the outcome is what a caller branches on. */
export const ATTEMPT_CODES = [
  // success
  "ok",
  // timeout
  "timeout",
  // adapter_unavailable
  "adapter_unavailable",
  "dns_failure",
  "connection_refused",
  "connection_reset",
  "tls_failure",
  // search_failed
  "search_failed",
  "rate_limited",
  "invalid_request",
  "unsupported_action",
  "locator_unknown",
  "locator_expired",
  "connection_lost",
  // provider_protocol_error
  "body_too_large",
  "search_budget_exceeded",
  "invalid_encoding",
  "invalid_utf8",
  "invalid_json",
  "schema_violation",
  "identity_mismatch",
  "redirect",
  "wrong_content_type",
  "interim_response",
  // cancelled
  "cancelled",
] as const;
export type AttemptCode = (typeof ATTEMPT_CODES)[number];

/** Why a declared provider was not contacted. */
export const SKIP_REASONS = [
  "disabled",
  "not_configured",
  "provider_limit",
  // left out for a while after failing or asking for a wait (docs/protocol.md, "Suspension")
  "suspended",
  // cannot honour a filter of the search that the gateway cannot evaluate either (docs/envelope.md,
  // "Filters"); never for today's filters, which the gateway evaluates itself
  "filter_unsupported",
  // its describe lists no protocol major this gateway speaks (docs/protocol.md, "describe")
  "protocol_version_unsupported",
] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

/** Which deadline fired on a timeout. */
export const TIMEOUT_BUDGETS = ["provider_timeout", "caller_deadline"] as const;
export type TimeoutBudget = (typeof TIMEOUT_BUDGETS)[number];

/** Codes a provider may put in a `tracefetch.provider-error.v1` body (docs/protocol.md). */
export const PROVIDER_ERROR_CODES = [
  "search_failed",
  "adapter_unavailable",
  "rate_limited",
  "invalid_request",
  "unsupported_action",
  "locator_unknown",
  "locator_expired",
] as const;
export type ProviderErrorCode = (typeof PROVIDER_ERROR_CODES)[number];

/**
 * What a provider can be asked over the provider protocol (docs/protocol.md, "Actions: describe, health, expand, refresh"): every
 * provider answers `search`; the others only when it lists them in its `describe` answer.
 */
export const PROVIDER_ACTIONS = [
  "search",
  "describe",
  "health",
  "expand",
  "refresh",
  "stats",
] as const;
export type ProviderAction = (typeof PROVIDER_ACTIONS)[number];

/** How a provider says it is doing, in a health answer. */
export const HEALTH_STATUSES = ["ok", "degraded", "unavailable"] as const;
export type HealthStatus = (typeof HEALTH_STATUSES)[number];

/** How much of its source a provider's answers cover, in a health answer. */
export const HEALTH_COVERAGES = ["complete", "partial", "unknown"] as const;
export type HealthCoverage = (typeof HEALTH_COVERAGES)[number];

/** Every code an envelope may carry (docs/envelope.md); the envelope table maps each to its row. */
export const ENVELOPE_CODES = [
  "ok",
  "partial",
  "invalid_json",
  "invalid_utf8",
  "body_too_large",
  "unsupported_media_type",
  "unknown_field",
  "null_field",
  "invalid_field",
  "query_empty",
  "query_too_long",
  "limit_out_of_range",
  "timeout_out_of_range",
  "unknown_scope",
  "unknown_provider",
  "unknown_tier",
  "provider_not_in_scope",
  "isolation_conflict",
  "no_providers_selected",
  "not_found",
  "method_not_allowed",
  "bad_request",
  "headers_too_large",
  "unauthorized",
  "token_invalid",
  "token_expired",
  "forbidden",
  "insufficient_scope",
  "overloaded",
  "rate_limited",
  "request_timeout",
  "all_providers_failed",
  "auth_unavailable",
  "internal_error",
  "transport_error",
  "gateway_timeout",
  "bad_gateway_answer",
  "human_decision_required",
  "locator_unknown",
  "locator_expired",
  "action_unsupported",
  "provider_failed",
  "state_unavailable",
  // fetching a page (docs/envelope.md, "Codes"; docs/security.md, "Fetching pages")
  "fetch_disabled",
  "url_forbidden",
  "robots_disallowed",
  "too_many_redirects",
  "unsupported_content_type",
  "fetch_failed",
] as const;
export type EnvelopeCode = (typeof ENVELOPE_CODES)[number];

export const ENVELOPE_STATUSES = [
  "ok",
  "transport_error",
  "usage_error",
  "client_error",
  "server_error",
] as const;
export type EnvelopeStatus = (typeof ENVELOPE_STATUSES)[number];

export const ENVELOPE_ACTIONS = [
  "none",
  "fix_input",
  "login",
  "check_access",
  "retry",
  "report",
  "connect",
] as const;
export type EnvelopeAction = (typeof ENVELOPE_ACTIONS)[number];

export const COMMANDS = [
  "search",
  "status",
  "doctor",
  "connect",
  "providers",
  "expand",
  "refresh",
  "fetch",
  "verify",
  "crawl",
  "schema",
  "validate",
  "conformance",
  "replay",
  "index",
  "unknown",
] as const;
export type Command = (typeof COMMANDS)[number];

export const SENSITIVITIES = ["public", "account-visible", "internal"] as const;
export type Sensitivity = (typeof SENSITIVITIES)[number];

export const EVIDENCE_STATES = [
  "local-source-match",
  "candidate-only-internal",
  "candidate-only",
] as const;
export type EvidenceState = (typeof EVIDENCE_STATES)[number];

/** What a fetch answers as its main content (docs/envelope.md, "Fetching a page"). */
export const FETCH_FORMATS = ["markdown", "text"] as const;
export type FetchFormat = (typeof FETCH_FORMATS)[number];

/**
 * How a fetched page's text was made: `markdown_served` (the site answered text/markdown, used as
 * served), `text_served` (text/plain, used as served), `extracted` (HTML or XHTML, its main content
 * extracted and turned into markdown).
 */
export const EVIDENCE_ROUTES = ["markdown_served", "text_served", "extracted"] as const;
export type EvidenceRoute = (typeof EVIDENCE_ROUTES)[number];

/** Names that mean the built-in providers; a manifest entry with one of them and no endpoint runs in process. */
export const BUILTIN_NAMES = ["workspace", "exa", "github"] as const;
export type BuiltinName = (typeof BUILTIN_NAMES)[number];

/** Scopes with a meaning of their own in a search request; no provider may declare them except `workspace`'s `local`. */
export const RESERVED_SCOPES = ["auto", "local", "public"] as const;
