/**
 * Transport: reaches one provider, over HTTP (through the runtime's provider exchange) or as an
 * adapter called in process, and turns whatever comes back into an answer or a failure along one
 * answer path: one reader of an answer's body (read-answer.ts) and one settling of a parsed answer
 * (settle-answer.ts), for search and every action. It also holds the one way an adapter calls a
 * third-party JSON API (upstream.ts), which reads through the same reader, and the one request
 * that goes to no provider: a batch of search traces POSTed to the operator's webhook
 * (webhook-sink.ts), loaded only by a gateway that has one.
 *
 * Boundary: nothing here plans, ranks or fuses, and no adapter lives here: the built-ins are in
 * src/builtins and the example providers in providers/. The transport moves one request and
 * reports honestly.
 *
 * Invariants:
 * - A failure never becomes a success with no candidates.
 * - An answer is judged by the same schema whichever transport brought it: an in-process answer
 *   that breaks the wire schema is a protocol error, as it would be over HTTP.
 * - No body is read past its cap; the body is cancelled at the cap.
 * - An HTTP provider's body, answer or error body, is charged to the search's byte budget as it is
 *   read, and nothing else is: an upstream read (upstream.ts) is capped per answer
 *   (MAX_PROVIDER_BODY_BYTES, error bodies MAX_ERROR_BODY_BYTES) and not charged, since an adapter
 *   is given no budget (docs/decisions.md).
 * - Redirects are never followed and no URL is built from input: only manifest endpoints and
 *   configured base URLs are called, each under the one URL policy (src/protocol/url-policy.ts).
 * - `classify-thrown.ts` (a thrown error) and `classify-status.ts` (a status, a provider error)
 *   are the only places something that went wrong becomes an outcome.
 * - Messages shown to callers are redacted and bounded, and never name an endpoint.
 */
export * from "./attempt-abort.ts";
export * from "./classify-status.ts";
export * from "./classify-thrown.ts";
export * from "./failure.ts";
export * from "./http-provider.ts";
export * from "./in-process-provider.ts";
export * from "./mcp-provider.ts";
export * from "./provider-client.ts";
export * from "./read-answer.ts";
export * from "./settle-answer.ts";
