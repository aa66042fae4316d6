/**
 * The memory adapter: the state of one gateway instance, kept in its own memory, as `npm start`
 * and the embedded default run it. Nothing is shared: each instance (each Workers isolate) counts
 * its own failures and sends its own probes, and coalesces only its own searches. The other
 * adapters fall back to one of these for an operation their store could not answer.
 *
 * Each provider's breaker, probe answers and leases are the steps of shard-steps.ts over a map of
 * its own, the very steps a Durable Object and the reference store run; callers' logs are
 * search-log.ts's step. Every operation answers at once, in the caller's turn.
 */
import type { BreakerEffect, BreakerEvent } from "../core/breaker.ts";
import type { BreakerRead } from "../core/suspension.ts";
import type { LogAsk, LogVerdict, SearchLog } from "../core/search-log.ts";
import { MAX_MEMORY_CALLERS } from "../protocol/state-limits.ts";
import type { SharedStateStatus } from "../protocol/envelope-schema.ts";
import type { SharedState } from "./shared-state.ts";
import type { ProbeKind, ProbeRecord } from "./state-store.ts";
import * as steps from "./shard-steps.ts";
import type { GuardStatus } from "./store-guard.ts";
import { lazy } from "../core/lazy-module.ts";

type SearchLogModule = typeof import("../core/search-log.ts");

/** search-log.ts, loaded with the first search a caller limit counts: on the Worker, its own module. */
const loadSearchLog = lazy(() => import("../core/search-log.ts"));
/** The module once loaded: later logs answer in the caller's turn. */
let searchLog: SearchLogModule | null = null;

export type MemoryClocks = {
  /** The gateway's monotonic clock, for suspensions and TTLs. */
  now: () => number;
  /** The wall clock, for the times callers read. */
  wall: () => number;
};

export class MemoryState implements SharedState {
  readonly backend = "memory" as const;
  /** Each provider's storage, as a shard of a store would hold it. */
  readonly #providers = new Map<string, steps.ShardKv>();
  /** Callers' search logs, the one used longest ago first (each use moves a caller last). */
  readonly #logs = new Map<string, { log: SearchLog; until: number }>();

  /**
   * `guard`: the guard of an answer cache in a store of its own (TRACEFETCH_CACHE_URL with no
   * shared state), whose trouble this state's status reports: one `shared_state` entry.
   */
  constructor(
    private readonly clocks: MemoryClocks,
    private readonly guard?: { status(): GuardStatus },
  ) {}

  status(): SharedStateStatus {
    return { backend: this.backend, ...(this.guard?.status() ?? { state: "ok", fallbacks: 0 }) };
  }

  breakers(names: readonly string[]): Map<string, BreakerRead> {
    const now = this.clocks.now();
    const wall = this.clocks.wall();
    const out = new Map<string, BreakerRead>();
    for (const name of names) {
      const kv = this.#providers.get(name);
      out.set(
        name,
        kv === undefined ? { breaker: null, now, wall } : steps.readBreaker(kv, now, wall),
      );
    }
    return out;
  }

  /** The step, done now: in process it needs no waiting, and the fan-out takes it as it comes. */
  stepBreaker(name: string, event: BreakerEvent, claimMs: number): BreakerEffect {
    const { now, wall } = this.clocks;
    return steps.stepBreaker(this.#kv(name), now(), event, claimMs, wall()).result.effect;
  }

  probeResult(kind: ProbeKind, name: string, maxAgeMs: number): ProbeRecord | null {
    const kv = this.#providers.get(name);
    return kv === undefined ? null : steps.probeResult(kv, this.clocks.now(), kind, maxAgeMs);
  }

  leaseProbe(kind: ProbeKind, name: string, ms: number): boolean {
    return steps.leaseProbe(this.#kv(name), this.clocks.now(), kind, ms).result;
  }

  storeProbeResult(kind: ProbeKind, name: string, value: unknown, ttlMs: number): void {
    steps.storeProbeResult(this.#kv(name), this.clocks.now(), kind, value, ttlMs);
  }

  /** An instance's own flights are coalesced in its own memory (src/gateway/flight.ts). */
  flight(_key: string): null {
    return null;
  }

  logSearch(caller: string, ask: LogAsk): LogVerdict | Promise<LogVerdict> {
    if (searchLog !== null) return this.#log(searchLog, caller, ask);
    return loadSearchLog().then((module) => this.#log(searchLog = module, caller, ask));
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  /** One step of a caller's log, with no await: atomic among this instance's searches. */
  #log(
    { EMPTY_LOG, logUntil, searchLogStep }: SearchLogModule,
    caller: string,
    ask: LogAsk,
  ): LogVerdict {
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

  #kv(name: string): steps.ShardKv {
    let kv = this.#providers.get(name);
    if (kv === undefined) this.#providers.set(name, kv = steps.mapKv());
    return kv;
  }
}
