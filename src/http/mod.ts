/**
 * HTTP: the thin Hono layer. Routes read input, call the gateway (src/gateway), and answer with
 * envelopes.
 *
 * Boundary: no search logic and no configuration parsing live here; every answer's header comes
 * from the envelope table.
 *
 * Invariants:
 * - Every route, 404, 405 and uncaught faults included, answers with an envelope (the raw schema
 *   documents aside).
 * - A request is fully validated before any provider is contacted.
 * - Endpoints never appear in an answer; the caller's credentials never go upstream.
 */
export * from "./create-gateway.ts";
export * from "./serve-provider.ts";
