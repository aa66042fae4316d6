/**
 * Transport: reaches one provider and turns whatever comes back into an answer or a failure.
 *
 * Boundary: nothing here plans, ranks or fuses; it moves one request and reports honestly.
 *
 * Invariants:
 * - A failure never becomes a success with no candidates.
 * - No byte past the cap is read; the body is cancelled at the cap. Every byte read from a remote
 *   provider is charged to the search's budget; a built-in's upstream answers are bounded one by
 *   one and not charged (an adapter is given no budget).
 * - Redirects are never followed and no URL is built from input: only manifest endpoints and
 *   configured base URLs are called, each under the one URL policy (src/protocol/url-policy.ts).
 * - `classify.ts` is the only place an error or a status becomes an outcome.
 * - Messages shown to callers are redacted and bounded, and never name an endpoint.
 */
export * from "./attempt-abort.ts";
export * from "./byte-budget.ts";
export * from "./bounded-fetch.ts";
export * from "./bounded-reader.ts";
export * from "./classify.ts";
export * from "./corpus-adapter.ts";
export * from "./http-provider.ts";
export * from "./in-process-provider.ts";
export * from "./provider-client.ts";
export * from "./redact.ts";
export * from "./semaphore.ts";
