/**
 * SharedState: what gateway instances share, as one port with an adapter per store (memory, Redis,
 * Durable Objects), chosen by the composition root. Every operation is async and bounded by the
 * store's timeout; an adapter that cannot reach its store answers from the instance's own memory
 * for that operation, counts the fallback, and reports itself degraded until an operation succeeds
 * again. No operation throws past the port, and no search fails because of the store.
 */
import type { BreakerEffect, BreakerEvent } from "../core/breaker.ts";
import type { BreakerRead } from "../core/suspension.ts";

export type StateBackend = "memory" | "redis" | "durable_objects";

/** `/v1/status` and `/v1/doctor`'s `shared_state` block. */
export type SharedStateStatus = {
  backend: StateBackend;
  state: "ok" | "degraded";
  /** Why it is degraded, naming no URL and no secret; absent when ok. */
  reason?: string;
  /** Operations answered from this instance's memory since it started, because the store failed. */
  fallbacks: number;
};

/** A describe or health answer shared by every caller and instance, with when it was stored. */
export type ProbeKind = "describe" | "health";
export type ProbeRecord = { value: unknown; storedAt: number };

/** How one instance takes part in a flight (coalescing across instances). */
export type FlightRole =
  /** This instance runs the search and publishes its events while someone waits. */
  | {
    kind: "lead";
    /**
     * Extends the lead's lease: `held` false once another instance took the flight over, `waited`
     * true once a follower registered (only then are events worth publishing).
     */
    renew: () => Promise<{ held: boolean; waited: boolean }>;
    publish: (event: unknown) => Promise<void>;
    /** Publishes the last event (null: none, the flight was abandoned) and lets the key go. */
    end: (last: unknown) => Promise<void>;
  }
  /** Another instance runs it: read its events as they come. */
  | { kind: "follow"; events: (signal: AbortSignal) => AsyncIterable<FlightEvent> };

/** An event of a flight led by another instance; `orphaned` when its leader stopped renewing. */
export type FlightEvent = { kind: "event"; event: unknown } | { kind: "orphaned" };

export interface SharedState {
  readonly backend: StateBackend;
  status(): SharedStateStatus;

  /** The breakers of these providers, mirrored at most MAX_MIRROR_AGE_MS; sync when fresh. */
  breakers(names: readonly string[]): Map<string, BreakerRead> | Promise<Map<string, BreakerRead>>;
  /** Applies one event to a provider's breaker atomically; `claimMs` bounds a probe claim. */
  stepBreaker(name: string, event: BreakerEvent, claimMs: number): Promise<BreakerEffect>;
  /** The same step taken in this turn, offered by an adapter that keeps the state in process. */
  stepBreakerNow?(name: string, event: BreakerEvent, claimMs: number): BreakerEffect;

  /** A describe or health answer another caller or instance stored, if any is fresh. */
  probeResult(kind: ProbeKind, name: string, maxAgeMs: number): Promise<ProbeRecord | null>;
  /** Claims the right to ask a provider for `ms`: one instance asks while the others wait. */
  leaseProbe(kind: ProbeKind, name: string, ms: number): Promise<boolean>;
  storeProbeResult(kind: ProbeKind, name: string, value: unknown, ttlMs: number): Promise<void>;

  /**
   * Takes part in the flight of a search identity (a keyed digest, never the search itself):
   * leads it, or follows the instance that does. Null: this store shares no flights (memory).
   */
  flight(key: string): Promise<FlightRole | null>;

  /** Lets go of the store's connections. */
  close(): Promise<void>;
}
