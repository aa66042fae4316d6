/**
 * Mining: the opt-in recording of search traces to the sink an operator chose (docs/security.md,
 * "Search traces"; docs/envelope.md, "Mining"), for `tracefetch replay` to measure later.
 *
 * Boundary: builds a trace from a search that was answered, queues it, and writes batches to one
 * sink (the Workers Queue here; the webhook is src/transport's, the JSONL file src/runtime's, as
 * it needs the file system). It never decides an answer and never reads a variable (src/config
 * does, and resolves the sink).
 *
 * Invariants:
 * - Nothing is recorded unless a sink is set and TRACEFETCH_MINING_CONFIRMED is on.
 * - A trace is built only after its search's answer was handed over; nothing mining does, fails
 *   or waits for reaches an answer beyond the block's state and health.
 * - A trace never holds a token, a header, a snippet, a title, a provider's error text or a
 *   caller's `sub` in the clear; the query and locators only non-public providers found are
 *   HMACs unless the operator opted in to their text. Fields are copied by name, never spread.
 * - The queue is bounded; when full the oldest trace is dropped and counted, never the answer.
 * - The recorder and the sinks are dynamic imports: a gateway that records nothing never loads them.
 */
export * from "./mining-gate.ts";
export type { TraceInput } from "./build-trace.ts";
