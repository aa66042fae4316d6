/**
 * Transport: reaches one provider, over HTTP or as an adapter called in process, and classifies
 * whatever comes back into an answer or a failure. It also holds the one way an adapter calls a
 * third-party JSON API (upstream.ts) and a bounded fetch for small documents such as a JWKS.
 *
 * Boundary: nothing here plans, ranks or fuses, and no adapter lives here: the built-ins are in
 * src/builtins and the example providers in providers/. The transport moves one request and
 * reports honestly.
 *
 * Invariants:
 * - A failure never becomes a success with no candidates.
 * - No body is read past its cap; the body is cancelled at the cap.
 * - An HTTP provider's body, answer or error body, is charged to the search's byte budget as it is
 *   read, and nothing else is: an upstream read (upstream.ts) is capped per answer
 *   (MAX_PROVIDER_BODY_BYTES, error bodies MAX_ERROR_BODY_BYTES) and not charged, since an adapter
 *   is given no budget (docs/decisions.md), and a bounded fetch has its own cap.
 * - Redirects are never followed and no URL is built from input: only manifest endpoints and
 *   configured base URLs are called, each under the one URL policy (src/protocol/url-policy.ts).
 * - `classify.ts` is the only place an error or a status becomes an outcome.
 * - Messages shown to callers are redacted and bounded, and never name an endpoint.
 */
export * from "./action-answers.ts";
export * from "./attempt-abort.ts";
export * from "./byte-budget.ts";
export * from "./bounded-fetch.ts";
export * from "./bounded-reader.ts";
export * from "./classify.ts";
export * from "./http-provider.ts";
export * from "./in-process-provider.ts";
export * from "./provider-client.ts";
export * from "./provider-post.ts";
export * from "./redact.ts";
export * from "./semaphore.ts";
