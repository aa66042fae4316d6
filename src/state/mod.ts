/**
 * The state gateway instances share (docs/deploy.md, "Shared state"): each provider's breaker
 * (suspension and its probe), describe and health answers with the lease of the one instance that
 * asks, the flights of identical searches, and each caller's search log (`caller_limits`). One
 * port, SharedState, with an adapter per store: memory (each instance alone, the default), Redis
 * or a Redis Cluster (Node and Deno; redis-url.ts, redis-connection.ts) and Durable Objects
 * (Workers); the composition root picks one. Beside it, the answer cache (docs/envelope.md, "Cached
 * answers"): the AnswerCache port in answer-cache.ts, in memory, in a Redis of its own choosing
 * (redis-cache.ts) or in Durable Objects (durable-cache.ts), every key under a provider's
 * generation, its calls under the instance's one guard (store-guard.ts), the shared state's when
 * there is one: one timeout, one back-off, one `shared_state` entry.
 * Each state machine a store keeps is written once: Lua for Redis (redis-scripts.ts), and the pure
 * steps of shard-steps.ts for the Durable Object, the in-process MemoryStore and the memory
 * adapter; property tests hold the two to each other.
 *
 * Boundary: this folder keeps and shares state and decides nothing about searches; what a breaker
 * step means is src/core's (breaker.ts), when to coalesce or probe is src/gateway's.
 *
 * Invariants:
 * - A store that fails never fails a search: every operation is bounded by the store's timeout
 *   and by what is left of the search it serves, and answered from the instance's memory instead,
 *   counted, and reported as `degraded`.
 * - Times that decide anything come from one clock per store (the store's own when shared), never
 *   from instances whose clocks may disagree.
 * - Nothing readable reaches a store: a search is known there by an HMAC digest alone, and only a
 *   search whose every provider is public is shared at all.
 * - What stays per instance, on purpose: the in-flight cap (it guards the instance's own memory),
 *   `max_concurrency` gates, and the mining backlog.
 */
export * from "./shared-state.ts";
export * from "./state-store.ts";
export * from "./memory-state.ts";
export * from "./guarded-state.ts";
export * from "./store-guard.ts";
export * from "./answer-cache.ts";
