/**
 * I/O primitives: the small pieces every layer that moves bytes shares, apart from any provider
 * client. The bounded reader and strict UTF-8 decoding, the per-search byte budget, the gate that
 * bounds concurrent work, redaction of secret-shaped text, a bounded fetch for small documents, the
 * provider exchange port (one POST and its bounded answer) and Retry-After parsing.
 *
 * Boundary: nothing here knows what a provider, a search or an envelope is; it imports only
 * src/protocol (for limits), so every layer above can use it without reaching the transport.
 *
 * Invariants:
 * - No body is read past its cap: the source is cancelled at the cap, and a truncated body is
 *   never returned as if it were whole.
 * - Decoding is strict UTF-8 on every runtime (a BOM is tolerated and dropped).
 * - A waiter whose signal aborts leaves its gate's queue and never holds a place.
 * - Redaction is linear in the text and never lengthens it past its bound.
 */
export * from "./bounded-fetch.ts";
export * from "./bounded-reader.ts";
export * from "./byte-budget.ts";
export * from "./provider-exchange.ts";
export * from "./redact.ts";
export * from "./gate.ts";
