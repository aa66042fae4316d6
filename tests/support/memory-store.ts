/**
 * A StateStore kept in this process (src/state/state-store.ts): several GuardedState instances
 * over one of these behave as instances over one Redis, without a server. It is the contract's
 * reference model, and lets a test make the store fail or hang on demand.
 */
import { type Breaker, breakerStep } from "../../src/core/breaker.ts";
import type { BreakerRead } from "../../src/core/suspension.ts";
import {
  EMPTY_LOG,
  type LogAsk,
  type SearchLog,
  searchLogStep,
} from "../../src/core/search-log.ts";
import {
  type FlightProgress,
  type ProbeKind,
  type ProbeRecord,
  type StateStore,
  StoreFailure,
} from "../../src/state/state-store.ts";

type Flight = { lease: string | null; leaseUntil: number; waited: boolean };
type Events = { events: unknown[]; ended: boolean };

export class MemoryStore implements StateStore {
  readonly backend = "redis" as const;
  readonly #breakers = new Map<string, Breaker>();
  readonly #probes = new Map<string, ProbeRecord & { expires: number }>();
  readonly #leases = new Map<string, number>();
  readonly #flights = new Map<string, Flight>();
  readonly #events = new Map<string, Events>();
  readonly #logs = new Map<string, SearchLog>();
  /** Every caller key a search log was kept under, as the store received it. */
  readonly logKeys: string[] = [];
  /** What every call does now: answer, fail at once, or never answer. */
  mode: "up" | "down" | "hang" = "up";
  calls = 0;
  /** Every flight key claimed, as the store received it. */
  readonly flightKeys: string[] = [];

  #now = () => performance.now();

  async #call<T>(work: () => T): Promise<T> {
    this.calls++;
    if (this.mode === "down") throw new StoreFailure("the store refused the connection");
    if (this.mode === "hang") return await new Promise<never>(() => {});
    // A round trip: the answer comes in a later turn, as a network store's would.
    await Promise.resolve();
    return work();
  }

  breakers(names: readonly string[]) {
    return this.#call(() => {
      const now = this.#now();
      const out = new Map<string, BreakerRead>();
      for (const name of names) {
        out.set(name, { breaker: this.#breakers.get(name) ?? null, now, wall: now });
      }
      return out;
    });
  }

  stepBreaker(name: string, event: Parameters<StateStore["stepBreaker"]>[1], claimMs: number) {
    return this.#call(() => {
      const now = this.#now();
      const t = { now, wall: now };
      const { breaker, effect } = breakerStep(this.#breakers.get(name) ?? null, event, t, claimMs);
      if (breaker === null) this.#breakers.delete(name);
      else this.#breakers.set(name, breaker);
      return { effect, read: { breaker, now, wall: now } };
    });
  }

  probeResult(kind: ProbeKind, name: string, maxAgeMs: number) {
    return this.#call(() => {
      const found = this.#probes.get(`${kind}:${name}`);
      const now = this.#now();
      if (found === undefined || now >= found.expires || now - found.storedAt > maxAgeMs) {
        return null;
      }
      return { value: found.value, storedAt: found.storedAt };
    });
  }

  leaseProbe(kind: ProbeKind, name: string, ms: number) {
    return this.#call(() => {
      const key = `${kind}:${name}`;
      const now = this.#now();
      if ((this.#leases.get(key) ?? 0) > now) return false;
      this.#leases.set(key, now + ms);
      return true;
    });
  }

  storeProbeResult(kind: ProbeKind, name: string, value: unknown, ttlMs: number) {
    return this.#call(() => {
      const now = this.#now();
      this.#probes.set(`${kind}:${name}`, { value, storedAt: now, expires: now + ttlMs });
      this.#leases.delete(`${kind}:${name}`);
    });
  }

  #held(key: string): Flight | null {
    const flight = this.#flights.get(key);
    if (flight === undefined || flight.lease === null || this.#now() >= flight.leaseUntil) {
      return null;
    }
    return flight;
  }

  claimFlight(key: string, id: string, leaseMs: number) {
    return this.#call(() => {
      this.flightKeys.push(key);
      const held = this.#held(key);
      if (held !== null) {
        held.waited = true;
        return { lead: false, id: held.lease as string };
      }
      this.#flights.set(key, { lease: id, leaseUntil: this.#now() + leaseMs, waited: false });
      this.#events.set(id, { events: [], ended: false });
      return { lead: true, id };
    });
  }

  renewFlight(key: string, id: string, leaseMs: number) {
    return this.#call(() => {
      const held = this.#held(key);
      if (held === null || held.lease !== id) return { held: false, waited: false };
      held.leaseUntil = this.#now() + leaseMs;
      return { held: true, waited: held.waited };
    });
  }

  publishFlight(key: string, id: string, events: unknown[], last: boolean) {
    return this.#call(() => {
      const kept = this.#events.get(id);
      if (kept === undefined) return;
      kept.events.push(...events);
      if (last) {
        kept.ended = true;
        if (this.#flights.get(key)?.lease === id) this.#flights.delete(key);
      }
    });
  }

  endFlight(key: string, id: string, leaseMs: number) {
    return this.#call(() => {
      const held = this.#held(key);
      if (held === null || held.lease !== id) return false;
      if (held.waited) {
        held.leaseUntil = this.#now() + leaseMs;
        return true;
      }
      this.#flights.delete(key);
      this.#events.delete(id);
      return false;
    });
  }

  dropFlight(key: string, id: string) {
    return this.#call(() => {
      if (this.#flights.get(key)?.lease === id) this.#flights.delete(key);
    });
  }

  readFlight(key: string, id: string, from: number): Promise<FlightProgress> {
    return this.#call(() => {
      const kept = this.#events.get(id);
      const events = kept?.events.slice(from) ?? [];
      if (kept?.ended) return { events, state: "ended" as const };
      const held = this.#held(key);
      return { events, state: held?.lease === id ? "running" as const : "orphaned" as const };
    });
  }

  logSearch(key: string, ask: LogAsk) {
    return this.#call(() => {
      this.logKeys.push(key);
      const { log, verdict } = searchLogStep(this.#logs.get(key) ?? EMPTY_LOG, this.#now(), ask);
      this.#logs.set(key, log);
      return verdict;
    });
  }

  /** Keys the store holds now, for tests that check nothing is left behind. */
  size(): number {
    return this.#breakers.size + this.#probes.size + this.#flights.size;
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
