/**
 * One shard of the shared state run over its storage: the steps of shard-steps.ts, their alarms,
 * and the reads of a flight that wait for its next event. GatewayStateObject (the Durable Object
 * of TRACEFETCH_STATE, src/runtime/state-object.ts) is a shell over one of these per object, its
 * storage the object's; MemoryStore (memory-store.ts) keeps one per shard name in this process.
 *
 * Invariants:
 * - A step runs with no await between its read and its writes; only its aftermath (an alarm,
 *   deleting everything) is awaited, after it.
 * - Memory holds only the reads waiting for an event and an ended flight's events, for
 *   FLIGHT_ENDED_KEEP_MS: storage keeps nothing of a flight once it ended.
 */
import type { BreakerEvent } from "../core/breaker.ts";
import type { LogAsk, LogVerdict } from "../core/search-log.ts";
import { FLIGHT_ENDED_KEEP_MS, FLIGHT_READ_WAIT_MS } from "../protocol/state-limits.ts";
import * as steps from "./shard-steps.ts";
import { logSearch } from "./log-step.ts";
import type { FlightProgress, ProbeKind } from "./state-store.ts";

/** A Durable Object's storage, as far as a shard uses it. */
export interface ShardStorage {
  readonly kv: steps.ShardKv;
  getAlarm(): Promise<number | null>;
  setAlarm(at: number): Promise<void>;
  deleteAll(): Promise<void>;
}

export type ShardClocks = {
  /** The store's clock: Date.now() in a Durable Object. */
  now: () => number;
  /** How long after a claim, or a lease a flight outlived, its alarm looks for a dead leader. */
  sweepMs: () => number;
};

export class StateShard {
  /** Reads waiting for a flight's next event, by flight id. */
  readonly #waiting = new Map<string, Set<() => void>>();
  /** Events of flights that ended, kept for followers between two reads; storage has none. */
  readonly #ended = new Map<string, { events: unknown[]; at: number }>();

  constructor(private readonly storage: ShardStorage, private readonly clocks: ShardClocks) {}

  readBreaker() {
    return steps.readBreaker(this.storage.kv, this.clocks.now());
  }

  stepBreaker(event: BreakerEvent, claimMs: number) {
    return this.#after(steps.stepBreaker(this.storage.kv, this.clocks.now(), event, claimMs));
  }

  probeResult(kind: ProbeKind, maxAgeMs: number) {
    return steps.probeResult(this.storage.kv, this.clocks.now(), kind, maxAgeMs);
  }

  leaseProbe(kind: ProbeKind, ms: number): Promise<boolean> {
    return this.#after(steps.leaseProbe(this.storage.kv, this.clocks.now(), kind, ms));
  }

  storeProbeResult(kind: ProbeKind, value: unknown, ttlMs: number): Promise<void> {
    const now = this.clocks.now();
    return this.#after(steps.storeProbeResult(this.storage.kv, now, kind, value, ttlMs));
  }

  claimFlight(id: string, leaseMs: number): Promise<{ lead: boolean; id: string }> {
    const { kv } = this.storage;
    const now = this.clocks.now();
    return this.#after(steps.claimFlight(kv, now, id, leaseMs, this.clocks.sweepMs()));
  }

  renewFlight(id: string, leaseMs: number) {
    return steps.renewFlight(this.storage.kv, this.clocks.now(), id, leaseMs);
  }

  publishFlight(id: string, events: unknown[], last: boolean): Promise<void> {
    const now = this.clocks.now();
    return this.#after(steps.publishFlight(this.storage.kv, now, id, events, last));
  }

  endFlight(id: string, leaseMs: number): Promise<boolean> {
    return this.#after(steps.endFlight(this.storage.kv, this.clocks.now(), id, leaseMs));
  }

  dropFlight(id: string): Promise<void> {
    return this.#after(steps.dropFlight(this.storage.kv, id));
  }

  /** Holds the call open, up to `waitMs`, until an event, the end, or the lease's lapse. */
  async readFlight(id: string, from: number, waitMs: number): Promise<FlightProgress> {
    // A held call costs duration: never longer than a follower asks for by default.
    const deadline = this.clocks.now() + Math.min(Math.max(0, waitMs), FLIGHT_READ_WAIT_MS);
    for (;;) {
      const now = this.clocks.now();
      this.#forget(now);
      const ended = this.#ended.get(id);
      if (ended !== undefined) return { events: ended.events.slice(from), state: "ended" };
      const { progress, until } = steps.flightProgress(this.storage.kv, now, id, from);
      if (progress.state !== "running" || progress.events.length > 0 || now >= deadline) {
        return progress;
      }
      await this.#nextEvent(id, Math.min(deadline, until) - now);
    }
  }

  logSearch(key: string, ask: LogAsk): Promise<LogVerdict> {
    return this.#after(logSearch(this.storage.kv, this.clocks.now(), key, ask));
  }

  alarm(): Promise<void> {
    return this.#after(steps.alarm(this.storage.kv, this.clocks.now(), this.clocks.sweepMs()));
  }

  /** Whether memory still holds something of this shard: a waiting read, or an ended flight's events. */
  holdsMemory(): boolean {
    this.#forget(this.clocks.now());
    return this.#waiting.size > 0 || this.#ended.size > 0;
  }

  /** What a step asked for once it ran: its readers woken, its storage cleared, its alarm set. */
  async #after<T>(step: steps.Step<T>): Promise<T> {
    if (step.ended !== undefined) {
      this.#forget(this.clocks.now());
      this.#ended.set(step.ended.id, { events: step.ended.events, at: this.clocks.now() });
    }
    if (step.wake !== undefined) this.#wake(step.wake);
    if (step.clear === true) await this.storage.deleteAll();
    else if (step.alarmAt !== undefined) await this.storage.setAlarm(step.alarmAt);
    else if (step.sweepBy !== undefined) {
      // One alarm serves many steps: when it runs, it sets the next one for what is left.
      if ((await this.storage.getAlarm()) === null) await this.storage.setAlarm(step.sweepBy);
    }
    return step.result;
  }

  /** Resolves on the flight's next publish, end or drop, or after `ms`. */
  #nextEvent(id: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const waiting = this.#waiting.get(id) ?? new Set<() => void>();
      const done = () => {
        clearTimeout(timer);
        waiting.delete(done);
        if (waiting.size === 0) this.#waiting.delete(id);
        resolve();
      };
      // At least a millisecond: the clock moves on only between events.
      const timer = setTimeout(done, Math.max(1, ms));
      waiting.add(done);
      this.#waiting.set(id, waiting);
    });
  }

  #wake(id: string): void {
    for (const done of [...(this.#waiting.get(id) ?? [])]) done();
  }

  #forget(now: number): void {
    for (const [id, ended] of this.#ended) {
      if (now - ended.at > FLIGHT_ENDED_KEEP_MS) this.#ended.delete(id);
    }
  }
}
