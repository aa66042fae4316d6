/**
 * Core: plans a search, fans it out, bounds what comes back, and fuses it into one ranked list.
 * Who may see which provider (caller.ts) is the planner's rule, so it is here; and the one helper
 * that loads a module with its first use (lazy-module.ts) is here as the lowest layer its users
 * reach.
 *
 * Boundary: Web APIs only (no Hono, no jose, no runtime modules); transports are reached through
 * the ProviderClient interface, and the clock comes in as a function.
 *
 * Invariants:
 * - A failed or skipped attempt never contributes candidates and is never reported as an empty success.
 * - Every attempt has a deadline (min of its provider's timeout and the caller's, less the fusion
 *   reserve) and is aborted when the caller leaves.
 * - Fusion walks attempts in plan order, so the output is the same whatever order answers arrive in.
 * - Every candidate is sanitised (the bounds in docs/protocol.md) before fusion or a caller sees
 *   it.
 */
export * from "./caller.ts";
export * from "./dedup-key.ts";
export * from "./fan-out.ts";
export * from "./fusion.ts";
export * from "./plan.ts";
export * from "./sanitize.ts";
export * from "./search.ts";
