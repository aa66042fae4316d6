/**
 * SharedState: what gateway instances share, as one port with an adapter per store (memory, Redis,
 * Durable Objects), chosen by the composition root. An operation the memory adapter answers at
 * once returns its value (`T | Promise<T>`), so the default path waits for nothing; a store's is
 * bounded by the store's timeout and by what is left of the search it serves; an adapter that cannot reach its store answers from the instance's own memory
 * for that operation, counts the fallback, and reports itself degraded until an operation succeeds
 * again. No operation throws past the port, and no search fails because of the store.
 */
import type { BreakerEffect, BreakerEvent } from "../core/breaker.ts";
import type { BreakerRead } from "../core/suspension.ts";
import type { LogAsk, LogVerdict } from "../core/search-log.ts";
import type { SharedStateStatus } from "../protocol/envelope-schema.ts";
import type { ProbeKind, ProbeRecord } from "./state-store.ts";

export type StateBackend = SharedStateStatus["backend"];

/** How one instance takes part in a flight (coalescing across instances). */
export type FlightRole =
  /** This instance runs the search; its events reach the followers once one registered. */
  | {
    kind: "lead";
    /** Passes an event on: kept until a follower registers, then published. */
    emit: (event: unknown) => void;
    /**
     * The flight ended with `last`, its final event; null: with no result (every caller left), and
     * its followers may lead it again.
     */
    end: (last: unknown) => Promise<void>;
  }
  /** Another instance runs it: its events as they come, from the first. */
  | { kind: "follow"; events: (signal: AbortSignal) => AsyncIterable<FlightEvent> };

/** An event of a flight led by another instance; `orphaned` when its leader stopped renewing. */
export type FlightEvent = { kind: "event"; event: unknown } | { kind: "orphaned" };

export interface SharedState {
  readonly backend: StateBackend;
  status(): SharedStateStatus;

  /**
   * The breakers of these providers, mirrored at most MAX_MIRROR_AGE_MS; sync when fresh. Here and
   * below, `budgetMs` is what is left of the search an operation serves: a store gets no longer.
   */
  breakers(
    names: readonly string[],
    budgetMs?: number,
  ): Map<string, BreakerRead> | Promise<Map<string, BreakerRead>>;
  /**
   * Applies one event to a provider's breaker atomically; `claimMs` bounds a probe claim. The
   * memory adapter answers at once, in the same turn; a store's adapter, later.
   */
  stepBreaker(
    name: string,
    event: BreakerEvent,
    claimMs: number,
  ): BreakerEffect | Promise<BreakerEffect>;

  /** A describe or health answer another caller or instance stored, if any is fresh. */
  probeResult(
    kind: ProbeKind,
    name: string,
    maxAgeMs: number,
  ): ProbeRecord | null | Promise<ProbeRecord | null>;
  /** Claims the right to ask a provider for `ms`: one instance asks while the others wait. */
  leaseProbe(kind: ProbeKind, name: string, ms: number): boolean | Promise<boolean>;
  storeProbeResult(
    kind: ProbeKind,
    name: string,
    value: unknown,
    ttlMs: number,
  ): void | Promise<void>;

  /**
   * Takes part in the flight of a search identity, which reaches a store only as its HMAC digest:
   * leads it, or follows the instance that does. Null: not shared (memory, or a store that failed).
   */
  flight(key: string, budgetMs?: number): FlightRole | null | Promise<FlightRole | null>;

  /**
   * Logs one search of `caller` (src/core/search-log.ts) when every limit `ask` names admits it,
   * counting what every instance logged; else refuses it with the wait. The caller (a token's
   * `sub` or a client address) reaches a store only as its HMAC digest.
   */
  logSearch(caller: string, ask: LogAsk, budgetMs?: number): LogVerdict | Promise<LogVerdict>;

  /** Lets go of the store's connections. */
  close(): Promise<void>;
}
