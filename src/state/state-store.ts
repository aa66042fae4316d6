/**
 * A store that gateway instances share, raw: what the Redis and Durable Objects adapters implement.
 * Any call may fail or hang; GuardedState (guarded-state.ts) bounds each with the store's timeout,
 * falls back to the instance's memory, and turns these calls into the SharedState port. Keys
 * reaching a store are provider names (the operator's, in the manifest) or HMAC digests.
 *
 * Invariants every adapter keeps (tests/support/state-contract.ts holds each to them):
 * - A breaker step is atomic across instances and runs breakerStep (src/core/breaker.ts) at the
 *   store's own clock, never an instance's.
 * - Every key expires by itself (for garbage collection only; no logic reads a TTL as its clock).
 * - A flight's lease has one holder; its events are kept only while someone may read them.
 */
import type { BreakerEffect, BreakerEvent } from "../core/breaker.ts";
import type { BreakerRead } from "../core/suspension.ts";
import type { LogAsk, LogVerdict } from "../core/search-log.ts";

export type ProbeKind = "describe" | "health";
/** A describe or health answer shared by every caller and instance, with when it was stored. */
export type ProbeRecord = { value: unknown; storedAt: number };

/** Where a flight stands, as a follower reads it. */
export type FlightProgress = {
  /** Events from the index asked for, in the order they were published. */
  events: unknown[];
  /**
   * `ended`: the last event is among them, or was read before; `orphaned`: the lease lapsed or
   * was dropped without an end, so a follower may lead (it reads no events then: it runs the
   * search itself); `running`: more may come.
   */
  state: "running" | "ended" | "orphaned";
};

/** A store's failure, with a reason fit for `/v1/status`: no URL, no address, no secret. */
export class StoreFailure extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = "StoreFailure";
  }
}

export interface StateStore {
  readonly backend: "redis" | "durable_objects";

  /** These providers' breakers (null for none), each read at the store's time. */
  breakers(names: readonly string[], signal: AbortSignal): Promise<Map<string, BreakerRead>>;
  /** One step, atomic across instances, at the store's time; with the breaker as it now reads. */
  stepBreaker(
    name: string,
    event: BreakerEvent,
    claimMs: number,
    signal: AbortSignal,
  ): Promise<{ effect: BreakerEffect; read: BreakerRead }>;

  /** The answer stored under `kind` and `name` if it was stored at most `maxAgeMs` ago. */
  probeResult(
    kind: ProbeKind,
    name: string,
    maxAgeMs: number,
    signal: AbortSignal,
  ): Promise<ProbeRecord | null>;
  /** True for the one caller who may ask the provider for the next `ms`; false for the others. */
  leaseProbe(kind: ProbeKind, name: string, ms: number, signal: AbortSignal): Promise<boolean>;
  /** Stores an answer for `ttlMs` and lets go of the lease. */
  storeProbeResult(
    kind: ProbeKind,
    name: string,
    value: unknown,
    ttlMs: number,
    signal: AbortSignal,
  ): Promise<void>;

  /**
   * Leads the flight of `key` as `id` for `leaseMs` when no one holds it; else registers a
   * follower of the one that does. The id of the flight this caller takes part in.
   */
  claimFlight(
    key: string,
    id: string,
    leaseMs: number,
    signal: AbortSignal,
  ): Promise<{ lead: boolean; id: string }>;
  /** Extends the lease while `id` holds it; `waited`: a follower registered. */
  renewFlight(
    key: string,
    id: string,
    leaseMs: number,
    signal: AbortSignal,
  ): Promise<{ held: boolean; waited: boolean }>;
  /**
   * Appends events to flight `id`; with `last`, the flight has ended: its lease goes, and its
   * events stay only until their followers can have read them.
   */
  publishFlight(
    key: string,
    id: string,
    events: unknown[],
    last: boolean,
    signal: AbortSignal,
  ): Promise<void>;
  /**
   * The end of flight `id` with no one to tell: drops it and answers false, unless a follower
   * registered, when it keeps the lease for `leaseMs` and answers true (the leader publishes).
   */
  endFlight(key: string, id: string, leaseMs: number, signal: AbortSignal): Promise<boolean>;
  /** Lets go of flight `id` with no result: its followers read `orphaned`. */
  dropFlight(key: string, id: string, signal: AbortSignal): Promise<void>;
  /**
   * Flight `id`'s events from index `from`. An adapter may wait up to `waitMs` for one to come
   * (Durable Objects do); one that answers at once is asked again by the follower.
   */
  readFlight(
    key: string,
    id: string,
    from: number,
    waitMs: number,
    signal: AbortSignal,
  ): Promise<FlightProgress>;

  /** One step of the search log of caller digest `key`, atomic across instances, at the store's time. */
  logSearch(key: string, ask: LogAsk, signal: AbortSignal): Promise<LogVerdict>;

  /** Lets go of the store's connections. */
  close(): Promise<void>;
}
