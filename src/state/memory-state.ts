/**
 * The memory adapter: the state of one gateway instance, kept in its own memory, as `npm start`
 * and the embedded default run it. Nothing is shared: each instance (each Workers isolate) counts
 * its own failures and sends its own probes, and coalesces only its own searches. The other
 * adapters fall back to one of these for an operation their store could not answer.
 */
import {
  type Breaker,
  type BreakerEffect,
  type BreakerEvent,
  breakerStep,
} from "../core/breaker.ts";
import type { BreakerRead } from "../core/suspension.ts";
import type { LogAsk, LogVerdict, SearchLog } from "../core/search-log.ts";
import { MAX_MEMORY_CALLERS } from "../protocol/state-limits.ts";
import type { SharedStateStatus } from "../protocol/envelope-schema.ts";
import type { FlightRole, SharedState } from "./shared-state.ts";
import type { ProbeKind, ProbeRecord } from "./state-store.ts";

/** search-log.ts, loaded with the first search a caller limit counts: on the Worker, its own module. */
let searchLog: Promise<typeof import("../core/search-log.ts")> | null = null;

export type MemoryClocks = {
  /** The gateway's monotonic clock, for suspensions and TTLs. */
  now: () => number;
  /** The wall clock, for the times callers read. */
  wall: () => number;
};

export class MemoryState implements SharedState {
  readonly backend = "memory" as const;
  readonly #breakers = new Map<string, Breaker>();
  readonly #probes = new Map<string, ProbeRecord & { expires: number }>();
  readonly #leases = new Map<string, number>();
  /** Callers' search logs, the one used longest ago first (each use moves a caller last). */
  readonly #logs = new Map<string, { log: SearchLog; until: number }>();

  constructor(private readonly clocks: MemoryClocks) {}

  status(): SharedStateStatus {
    return { backend: this.backend, state: "ok", fallbacks: 0 };
  }

  breakers(names: readonly string[]): Map<string, BreakerRead> {
    const now = this.clocks.now();
    const wall = this.clocks.wall();
    const out = new Map<string, BreakerRead>();
    for (const name of names) {
      out.set(name, { breaker: this.#breakers.get(name) ?? null, now, wall });
    }
    return out;
  }

  /** The step, done now: in process it needs no waiting, and the fan-out takes it as it comes. */
  stepBreaker(name: string, event: BreakerEvent, claimMs: number): BreakerEffect {
    const t = { now: this.clocks.now(), wall: this.clocks.wall() };
    const { breaker, effect } = breakerStep(this.#breakers.get(name) ?? null, event, t, claimMs);
    if (breaker === null) this.#breakers.delete(name);
    else this.#breakers.set(name, breaker);
    return effect;
  }

  probeResult(kind: ProbeKind, name: string, maxAgeMs: number): Promise<ProbeRecord | null> {
    const found = this.#probes.get(`${kind}:${name}`);
    const now = this.clocks.now();
    const fresh = found !== undefined && now < found.expires && now - found.storedAt <= maxAgeMs;
    return Promise.resolve(fresh ? { value: found.value, storedAt: found.storedAt } : null);
  }

  leaseProbe(kind: ProbeKind, name: string, ms: number): Promise<boolean> {
    const key = `${kind}:${name}`;
    const now = this.clocks.now();
    if ((this.#leases.get(key) ?? 0) > now) return Promise.resolve(false);
    this.#leases.set(key, now + ms);
    return Promise.resolve(true);
  }

  storeProbeResult(kind: ProbeKind, name: string, value: unknown, ttlMs: number): Promise<void> {
    const now = this.clocks.now();
    this.#probes.set(`${kind}:${name}`, { value, storedAt: now, expires: now + ttlMs });
    this.#leases.delete(`${kind}:${name}`);
    return Promise.resolve();
  }

  /** An instance's own flights are coalesced in its own memory (src/gateway/flight.ts). */
  flight(_key: string): Promise<FlightRole | null> {
    return Promise.resolve(null);
  }

  async logSearch(caller: string, ask: LogAsk): Promise<LogVerdict> {
    const { EMPTY_LOG, logUntil, searchLogStep } = await (searchLog ??= import(
      "../core/search-log.ts"
    ));
    // From here to the end, no await: the step is atomic among this instance's searches.
    const now = this.clocks.now();
    // Logs whose every time left its window are forgotten, oldest use first.
    for (const [key, log] of this.#logs) {
      if (log.until > now && this.#logs.size < MAX_MEMORY_CALLERS) break;
      this.#logs.delete(key);
    }
    const { log, verdict } = searchLogStep(this.#logs.get(caller)?.log ?? EMPTY_LOG, now, ask);
    this.#logs.delete(caller);
    const until = logUntil(log, ask);
    if (until > now) this.#logs.set(caller, { log, until });
    return verdict;
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
