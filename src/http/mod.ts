/**
 * HTTP: the gateway's thin Hono layer. Routes read input, call the gateway (src/gateway), and
 * answer with envelopes.
 *
 * Boundary: the gateway's routes only: no search logic and no configuration parsing live here (both
 * are src/gateway's), nor a provider's side of the protocol (serveProvider is the kit's); every
 * answer's header comes from the envelope table.
 *
 * Invariants:
 * - Every route, 404, 405 and uncaught faults included, answers with an envelope, except the
 *   documents docs/envelope.md lists as not envelopes (raw schemas, JWKS, the OpenAPI document,
 *   /docs, the page and its files) and the JSON-RPC that MCP requires on `/mcp`; their refusals
 *   are envelopes too.
 * - A request is fully validated before any provider is contacted.
 * - Endpoints never appear in an answer; the caller's credentials never go upstream.
 */
export * from "./create-gateway.ts";
