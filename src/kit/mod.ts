/**
 * Kit: what a provider author needs beyond the protocol itself: checking that an endpoint speaks
 * the provider protocol the way the gateway expects, and showing the evidence.
 *
 * Boundary: the kit calls a provider from the outside, over HTTP, exactly as the gateway would; it
 * never reaches into a provider's code and never changes what the gateway accepts.
 *
 * Invariants:
 * - Every request has a deadline that covers connect, headers and body; no redirect is followed.
 * - No body is read past MAX_PROVIDER_BODY_BYTES, and a report keeps at most a bounded excerpt.
 * - No case passes without a complete answer to judge: no answer, a timeout or an over-long body
 *   fails it.
 * - The caller's header values never appear in a report or a transcript.
 * - The same exchanges give the same transcript, byte for byte.
 */
export * from "./check-bounds.ts";
export * from "./conformance.ts";
export * from "./format-transcript.ts";
