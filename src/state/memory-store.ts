/**
 * A StateStore kept in this process: the shards a Durable Object namespace would hold, each a
 * StateShard (state-shard.ts) over a map, so the steps a store runs are the ones the Durable
 * Object runs, written once. Several GuardedState instances over one of these behave as
 * instances over one shared store, without a server: the reference model of the state contract
 * and of the Lua scripts' differential tests, and a store a test can make fail or hang on demand.
 *
 * Invariants:
 * - Every call answers in a later turn, as a network store's would, and runs one step.
 * - An alarm that fell due runs before the next call reaches any shard; a shard left with nothing
 *   stored and no alarm is forgotten.
 */
import type { BreakerEvent } from "../core/breaker.ts";
import type { BreakerRead } from "../core/suspension.ts";
import type { LogAsk } from "../core/search-log.ts";
import { FLIGHT_SWEEP_MS } from "../protocol/state-limits.ts";
import type { ShardKv } from "./shard-steps.ts";
import { type ShardStorage, StateShard } from "./state-shard.ts";
import {
  type FlightProgress,
  type ProbeKind,
  type StateStore,
  StoreFailure,
} from "./state-store.ts";

export type MemoryStoreOptions = {
  /** The store's clock; Date.now() unless a test drives its own. */
  now?: () => number;
  /** How long after a claim the alarm looks for a dead leader. */
  sweepMs?: number;
};

export class MemoryStore implements StateStore {
  readonly backend = "redis" as const;
  readonly #shards = new Map<string, { shard: StateShard; storage: MapStorage }>();
  readonly #now: () => number;
  readonly #sweepMs: number;
  /** Every caller key a search log was kept under, as the store received it. */
  readonly logKeys: string[] = [];
  /** Every flight key claimed, as the store received it. */
  readonly flightKeys: string[] = [];
  /** What every call does now: answer, fail at once, or never answer. */
  mode: "up" | "down" | "hang" = "up";
  calls = 0;

  constructor(options: MemoryStoreOptions = {}) {
    this.#now = options.now ?? Date.now;
    this.#sweepMs = options.sweepMs ?? FLIGHT_SWEEP_MS;
  }

  async breakers(names: readonly string[]) {
    return await this.#call(() => {
      const out = new Map<string, BreakerRead>();
      for (const name of names) out.set(name, this.#shard(`provider:${name}`).readBreaker());
      return out;
    });
  }

  stepBreaker(name: string, event: BreakerEvent, claimMs: number) {
    return this.#call(() => this.#shard(`provider:${name}`).stepBreaker(event, claimMs));
  }

  probeResult(kind: ProbeKind, name: string, maxAgeMs: number) {
    return this.#call(() => this.#shard(`provider:${name}`).probeResult(kind, maxAgeMs));
  }

  leaseProbe(kind: ProbeKind, name: string, ms: number) {
    return this.#call(() => this.#shard(`provider:${name}`).leaseProbe(kind, ms));
  }

  storeProbeResult(kind: ProbeKind, name: string, value: unknown, ttlMs: number) {
    return this.#call(() => this.#shard(`provider:${name}`).storeProbeResult(kind, value, ttlMs));
  }

  claimFlight(key: string, id: string, leaseMs: number) {
    return this.#call(() => {
      this.flightKeys.push(key);
      return this.#shard(`flight:${key}`).claimFlight(id, leaseMs);
    });
  }

  renewFlight(key: string, id: string, leaseMs: number) {
    return this.#call(() => this.#shard(`flight:${key}`).renewFlight(id, leaseMs));
  }

  publishFlight(key: string, id: string, events: unknown[], last: boolean) {
    return this.#call(() => this.#shard(`flight:${key}`).publishFlight(id, events, last));
  }

  endFlight(key: string, id: string, leaseMs: number) {
    return this.#call(() => this.#shard(`flight:${key}`).endFlight(id, leaseMs));
  }

  dropFlight(key: string, id: string) {
    return this.#call(() => this.#shard(`flight:${key}`).dropFlight(id));
  }

  readFlight(key: string, id: string, from: number, waitMs: number): Promise<FlightProgress> {
    return this.#call(() => this.#shard(`flight:${key}`).readFlight(id, from, waitMs));
  }

  logSearch(key: string, ask: LogAsk) {
    return this.#call(() => {
      this.logKeys.push(key);
      return this.#shard(`caller:${key}`).logSearch(key, ask);
    });
  }

  /** What a shard holds now, key by key in order, for tests that compare stores or look for leftovers. */
  stored(name: string): [string, unknown][] {
    return [...(this.#shards.get(name)?.storage.kv.list() ?? [])];
  }

  /** Keys the store holds now, for tests that check nothing is left behind. */
  size(): number {
    let size = 0;
    for (const { storage } of this.#shards.values()) size += storage.keys();
    return size;
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  async #call<T>(work: () => T | Promise<T>): Promise<T> {
    this.calls++;
    if (this.mode === "down") throw new StoreFailure("the store refused the connection");
    if (this.mode === "hang") return await new Promise<never>(() => {});
    // A round trip: the answer comes in a later turn, as a network store's would.
    await Promise.resolve();
    await this.#alarms();
    return await work();
  }

  /** Runs the alarms that fell due, and forgets the shards left empty. */
  async #alarms(): Promise<void> {
    const now = this.#now();
    for (const [name, { shard, storage }] of this.#shards) {
      if (storage.alarmAt !== null && storage.alarmAt <= now) {
        storage.alarmAt = null;
        await shard.alarm();
      }
      if (storage.alarmAt === null && storage.keys() === 0 && !shard.holdsMemory()) {
        this.#shards.delete(name);
      }
    }
  }

  #shard(name: string): StateShard {
    let held = this.#shards.get(name);
    if (held === undefined) {
      const storage = new MapStorage();
      const sweepMs = this.#sweepMs;
      held = {
        storage,
        shard: new StateShard(storage, { now: this.#now, sweepMs: () => sweepMs }),
      };
      this.#shards.set(name, held);
    }
    return held.shard;
  }
}

/** A Durable Object's storage over a map: keys listed in order, as the object's are. */
class MapStorage implements ShardStorage {
  readonly #map = new Map<string, unknown>();
  alarmAt: number | null = null;

  readonly kv: ShardKv = {
    get: <T>(key: string) => structuredClone(this.#map.get(key)) as T | undefined,
    put: (key, value) => void this.#map.set(key, structuredClone(value)),
    delete: (key) => this.#map.delete(key),
    list: <T>(options: Parameters<ShardKv["list"]>[0] = {}) => {
      const { prefix = "", start = "", reverse = false, limit = Infinity } = options;
      const keys = [...this.#map.keys()]
        .filter((key) => key.startsWith(prefix) && key >= start)
        .sort();
      if (reverse) keys.reverse();
      return keys.slice(0, limit).map((key) =>
        [key, structuredClone(this.#map.get(key))] as [string, T]
      );
    },
  };

  keys(): number {
    return this.#map.size;
  }

  getAlarm(): Promise<number | null> {
    return Promise.resolve(this.alarmAt);
  }

  setAlarm(at: number): Promise<void> {
    this.alarmAt = at;
    return Promise.resolve();
  }

  deleteAll(): Promise<void> {
    this.#map.clear();
    this.alarmAt = null;
    return Promise.resolve();
  }
}
