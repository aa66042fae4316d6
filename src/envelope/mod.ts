/**
 * Envelope: the gateway's one answer shape and the one mapping from a code to the world.
 *
 * Boundary: builds envelopes and maps codes to exit, status, action and HTTP; it never decides
 * what happened, only how to say it.
 *
 * Invariants:
 * - Every answer carries the eight header fields and a request id.
 * - The header comes from CODES and nowhere else; `ok` is true exactly when the exit code is 0.
 */
export * from "./build-envelope.ts";
export * from "./code-table.ts";
export * from "./search-envelope.ts";
