/**
 * Gateway: the engine behind the HTTP routes and the CLI's in-process search. It parses the
 * settings (for the composition roots, which call readSettings once), resolves a configuration
 * from them and the runtime's ports, keeps a gateway instance's state, and runs one search (plan,
 * fan-out, envelope) for whoever asks.
 *
 * Boundary: no HTTP here (no Hono, no Request or Response) and no runtime modules; the routes and
 * the CLI parse their input, call `admit` or `search`, and present the envelope they get back.
 *
 * Invariants:
 * - Every setting the gateway, its runtimes and the CLI read (HOST, PORT, TRACEFETCH_*) is parsed
 *   in settings.ts, with one grammar per kind: booleans accept 1/true/yes/on and 0/false/no/off
 *   in any case, numbers are integers in range, an empty value is unset, and anything else stops
 *   the start with one line naming the variable. Secrets are read by name only: the built-ins'
 *   keys by builtinsFromEnv (handed the loopback switch as parsed here), `auth: bearer` secrets by
 *   the name the manifest gives.
 * - A search takes an in-flight slot only after its request was read, validated and its providers
 *   picked; a refused pick takes none and contacts no provider. The slot is taken before the
 *   caller's limits count the search, so a search shed as `overloaded` costs its caller nothing.
 * - Only GatewayState counts searches in flight, and a slot is given back exactly once, when the
 *   search's answer was delivered (a stream's last event written) or the run failed.
 * - The version the gateway reports is package.json's.
 * - A search's trace (mining/) is recorded only after its answer was handed over, and nothing
 *   mining does changes an answer.
 */
export * from "./settings.ts";
export * from "./env-values.ts";
export * from "./gateway-config.ts";
export * from "./gateway-state.ts";
export * from "./mining/mod.ts";
export * from "./remote-builtins.ts";
export * from "./search-run.ts";
export * from "./settings.ts";
export * from "./slots.ts";
export * from "./start-problems.ts";
export * from "./version.ts";
