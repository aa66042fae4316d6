/**
 * A shared store behind the SharedState port: each operation under the instance's StoreGuard
 * (store-guard.ts: the store's timeout, the search's budget, the back-off) and answered from this
 * instance's memory when the store fails, healthy providers' breakers mirrored for at most a
 * second, and flight and caller keys hashed before they leave the instance.
 *
 * Invariants:
 * - No operation throws and none waits past its guard's bound (store-guard.ts).
 * - A search identity or a caller reaches the store only as HMAC-SHA-256 under
 *   TRACEFETCH_STATE_SECRET.
 */
import type { BreakerEvent } from "../core/breaker.ts";
import type { BreakerRead } from "../core/suspension.ts";
import type { LogAsk, LogVerdict } from "../core/search-log.ts";
import { FLIGHT_LEASE_MS, MAX_MIRROR_AGE_MS } from "../protocol/state-limits.ts";
import { MemoryState } from "./memory-state.ts";
import type { SharedStateStatus } from "../protocol/envelope-schema.ts";
import type { FlightRole, SharedState } from "./shared-state.ts";
import type { ProbeKind, ProbeRecord, StateStore } from "./state-store.ts";
import { followFlight, type GuardedStore, leadFlight } from "./flight-roles.ts";
import { type Hmac, type HmacPort, keyedHmac } from "../io/digests.ts";
import type { StoreCalls } from "./answer-cache.ts";
import { StoreGuard } from "./store-guard.ts";

export type GuardOptions = {
  /** TRACEFETCH_STATE_TIMEOUT_MS: how long one operation may take. */
  timeoutMs: number;
  /** TRACEFETCH_STATE_SECRET: the HMAC key of flight keys. */
  secret: string;
  /** The runtime's own HMAC-SHA-256, when its root gives one (io/digests.ts). */
  mac?: HmacPort | undefined;
  /** This instance's monotonic clock, for the mirror and the retry. */
  now: () => number;
  /** The wall clock, for the memory that answers while the store fails. */
  wall: () => number;
};

export class GuardedState implements SharedState, GuardedStore, StoreCalls {
  readonly backend: StateStore["backend"];
  readonly #local: MemoryState;
  readonly #guard: StoreGuard;
  readonly #mirror = new Map<string, { read: BreakerRead; at: number }>();
  readonly #leads = new Set<() => void>();
  #mac: Hmac | null = null;

  constructor(readonly store: StateStore, private readonly options: GuardOptions) {
    this.backend = store.backend;
    this.#guard = new StoreGuard(options);
    this.#local = new MemoryState({ now: options.now, wall: options.wall });
  }

  status(): SharedStateStatus {
    return { backend: this.backend, ...this.#guard.status() };
  }

  /** One store operation under the guard (store-guard.ts), with its fallback. */
  guard<T>(
    operation: (signal: AbortSignal) => Promise<T>,
    fallback: () => T | Promise<T>,
    extraMs = 0,
    budgetMs = Infinity,
  ): Promise<T> {
    return this.#guard.guard(operation, fallback, extraMs, budgetMs);
  }

  /**
   * One call of the answer cache (redis-cache.ts, durable-cache.ts) under the same guard: null
   * when the store failed, timed out, or is left alone; its failures count and show as the state's.
   */
  run<T>(call: () => Promise<T>, budgetMs?: number): Promise<T | null> {
    return this.#guard.run(call, budgetMs);
  }

  breakers(
    names: readonly string[],
    budgetMs?: number,
  ): Map<string, BreakerRead> | Promise<Map<string, BreakerRead>> {
    const now = this.options.now();
    const out = new Map<string, BreakerRead>();
    const missing: string[] = [];
    for (const name of names) {
      const mirrored = this.#mirror.get(name);
      if (mirrored !== undefined && now - mirrored.at <= MAX_MIRROR_AGE_MS) {
        // The store's clock has moved on as ours has since the read.
        const aged = now - mirrored.at;
        const { read } = mirrored;
        out.set(name, { breaker: read.breaker, now: read.now + aged, wall: read.wall + aged });
      } else missing.push(name);
    }
    if (missing.length === 0) return out;
    return this.guard(
      async (signal) => {
        const reads = await this.store.breakers(missing, signal);
        for (const [name, read] of reads) this.#remember(name, read, now);
        return reads;
      },
      () => this.#local.breakers(missing),
      0,
      budgetMs,
    ).then((reads) => {
      for (const [name, read] of reads) out.set(name, read);
      return out;
    });
  }

  /**
   * Mirrors a provider's read only while it remembers nothing (a healthy provider, the hot path):
   * one that fails, is suspended or is being probed is read from the store by every search, so a
   * suspension or a failure count made elsewhere is never seen late.
   */
  #remember(name: string, read: BreakerRead, at: number): void {
    if (read.breaker === null) this.#mirror.set(name, { read, at });
    else this.#mirror.delete(name);
  }

  stepBreaker(name: string, event: BreakerEvent, claimMs: number) {
    return this.guard(
      async (signal) => {
        const { effect, read } = await this.store.stepBreaker(name, event, claimMs, signal);
        this.#remember(name, read, this.options.now());
        return effect;
      },
      () => this.#local.stepBreaker(name, event, claimMs),
    );
  }

  probeResult(kind: ProbeKind, name: string, maxAgeMs: number): Promise<ProbeRecord | null> {
    return this.guard(
      (signal) => this.store.probeResult(kind, name, maxAgeMs, signal),
      () => this.#local.probeResult(kind, name, maxAgeMs),
    );
  }

  leaseProbe(kind: ProbeKind, name: string, ms: number): Promise<boolean> {
    return this.guard(
      (signal) => this.store.leaseProbe(kind, name, ms, signal),
      () => this.#local.leaseProbe(kind, name, ms),
    );
  }

  storeProbeResult(kind: ProbeKind, name: string, value: unknown, ttlMs: number): Promise<void> {
    return this.guard(
      (signal) => this.store.storeProbeResult(kind, name, value, ttlMs, signal),
      () => this.#local.storeProbeResult(kind, name, value, ttlMs),
    );
  }

  async flight(identity: string, budgetMs?: number): Promise<FlightRole | null> {
    const key = await this.#digest("flight", identity);
    const id = crypto.randomUUID();
    const claimed = await this.guard(
      (signal) => this.store.claimFlight(key, id, FLIGHT_LEASE_MS, signal),
      () => null,
      0,
      budgetMs,
    );
    if (claimed === null) return null;
    if (!claimed.lead) return followFlight(this, key, claimed.id);
    const lead = leadFlight(this, key, id);
    this.#leads.add(lead.stop);
    return {
      ...lead.role,
      end: (last) => {
        this.#leads.delete(lead.stop);
        return lead.role.end(last);
      },
    };
  }

  /** A caller's search log, kept under the HMAC of the caller: a store never reads who it is. */
  async logSearch(caller: string, ask: LogAsk, budgetMs?: number): Promise<LogVerdict> {
    const key = await this.#digest("caller", caller);
    return await this.guard(
      (signal) => this.store.logSearch(key, ask, signal),
      () => this.#local.logSearch(caller, ask),
      0,
      budgetMs,
    );
  }

  /** Stops renewing every flight this instance leads, and lets go of the store. */
  async close(): Promise<void> {
    for (const stop of this.#leads) stop();
    this.#leads.clear();
    await this.store.close();
  }

  /** The key a flight or a caller's log has in the store: a labelled HMAC, in hex. */
  #digest(purpose: "flight" | "caller", value: string): string | Promise<string> {
    this.#mac ??= keyedHmac(this.options.secret, "hex", this.options.mac);
    return this.#mac(purpose, value);
  }
}
