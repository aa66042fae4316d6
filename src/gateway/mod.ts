/**
 * Gateway: the engine behind the HTTP routes and the CLI's in-process search. It keeps a gateway
 * instance's state and admits and runs one search (plan, fan-out, envelope) for whoever asks, with
 * the configuration src/config resolved.
 *
 * Boundary: no HTTP here (no Hono, no Request or Response), no runtime modules, and no settings
 * read or parsed (src/config does that, once, for the roots); the routes and the CLI parse their
 * input, call `admit` or `search`, and present the envelope they get back.
 *
 * Invariants:
 * - A search takes an in-flight slot only after its request was read, validated and its providers
 *   picked; a refused pick takes none and contacts no provider. The slot is taken before the
 *   caller's limits count the search, so a search shed as `overloaded` costs its caller nothing.
 * - Only GatewayState counts searches in flight, and a slot is given back exactly once, when the
 *   search's answer was delivered (a stream's last event written) or the run failed.
 * - The version the gateway reports is package.json's.
 * - A search's trace (mining/) is recorded only after its answer was handed over, and nothing
 *   mining does changes an answer.
 */
export * from "./gateway-state.ts";
export * from "./mining/mod.ts";
export * from "./search-run.ts";
export * from "./slots.ts";
export * from "../protocol/version.ts";
