/**
 * Protocol: the wire contracts of TraceFetch Edge as valibot schemas, the closed code lists, and
 * every limit with its reason.
 *
 * Boundary: pure data and validation; nothing here performs I/O, reads the clock or knows a runtime.
 *
 * Invariants:
 * - Version 1 schemas are strict: an unknown field is refused, never ignored.
 * - Every bound lives in limits.ts, or by topic in admission-limits.ts, state-limits.ts,
 *   trace-limits.ts and fetch-limits.ts, with the reason for its value.
 * - The JSON Schemas in schemas/ are generated from these schemas and never edited by hand.
 */
export * from "./codes.ts";
export * from "./limits.ts";
export * from "./admission-limits.ts";
export * from "./state-limits.ts";
export * from "./trace-limits.ts";
export * from "./fetch-limits.ts";
export * from "./manifest-schema.ts";
export * from "./validate-manifest.ts";
export * from "./provider-wire.ts";
export * from "./provider-contract.ts";
export * from "./provider-actions.ts";
export * from "./collection-stats.ts";
export * from "./check-provider-answer.ts";
export * from "./url-policy.ts";
export * from "./search-request.ts";
export * from "./fetch-request.ts";
export * from "./evidence-route-limits.ts";
export * from "./evidence-schema.ts";
export * from "./envelope-schema.ts";
export * from "./config-error.ts";
export * from "./json-value.ts";
export * from "./trace-schema.ts";
export * from "./trace-version.ts";
