/**
 * The Redis adapter of the shared state (state-store.ts), over one ioredis connection: breakers,
 * probe results and their leases, and flights, each operation one round trip, every update that
 * reads first a Lua script (redis-scripts.ts) run at the store's clock.
 *
 * Keys, each under the prefix (TRACEFETCH_STATE_PREFIX) and a hash tag, `{…}`, shared by the keys of
 * one script call, so that on a Redis Cluster each call's keys are in one slot:
 * - `{provider:<name>}:breaker`: the breaker's JSON, until STORED_BREAKER_IDLE_MS past the last
 *   moment it names; `{provider:<name>}:probe:<kind>`: `{"storedAt":…,"value":…}` for its TTL;
 *   `{provider:<name>}:lease:<kind>`: the probe lease (SET NX PX).
 * - `{flight:<key>}:lease`, holding the leader's id; `{flight:<key>}:waited`, holding the id of the
 *   leader a follower registered with; `{flight:<key>}:<id>:events` (a list of JSON texts) and
 *   `:<id>:ended`: kept with the lease, and FLIGHT_LEASE_MS after the end.
 * - `{caller:<digest>}:log`: a caller's search log (a sorted set of times), and `:cost` its cost by
 *   the minute (a hash), each for its window past the last search it counts.
 *
 * Invariants:
 * - Every key carries a TTL; none is read as a clock.
 * - A failure reaches the caller as StoreFailure with a reason that names no URL, host, port,
 *   password or key (redis-connection.ts); nothing is logged per failure.
 */
import type { BreakerEffect, BreakerEvent } from "../core/breaker.ts";
import type { BreakerRead } from "../core/suspension.ts";
import { CALLER_COST_BUCKET_MS } from "../protocol/limits.ts";
import type { LogAsk, LogVerdict } from "../core/search-log.ts";
import { FLIGHT_LEASE_MS } from "../protocol/state-limits.ts";
import { RedisConnection, taggedKey } from "./redis-connection.ts";
import type { RedisTarget } from "./redis-url.ts";
import {
  asBreaker,
  BREAKER_LIMITS,
  parse,
  type ScriptName,
  SCRIPTS,
  unreadable,
} from "./redis-scripts.ts";
import type { FlightProgress, ProbeKind, ProbeRecord, StateStore } from "./state-store.ts";

export class RedisStore implements StateStore {
  readonly backend = "redis" as const;
  readonly #redis: RedisConnection;

  /** `target`: TRACEFETCH_STATE_URL, parsed (redis-url.ts); `prefix`: TRACEFETCH_STATE_PREFIX. */
  constructor(target: RedisTarget, private readonly prefix: string) {
    this.#redis = new RedisConnection(target, SCRIPTS);
  }

  /** Why the gateway must not start over this store (redis-connection.ts), or null. */
  startProblem(): Promise<string | null> {
    return this.#redis.startProblem("TRACEFETCH_STATE_URL");
  }

  async breakers(names: readonly string[]): Promise<Map<string, BreakerRead>> {
    // One call per provider (each its own hash tag), all written at once: one round trip.
    const reads = await Promise.all(names.map(async (name) => {
      const reply = await this.#script("tracefetchBreakers", [this.#provider(name, "breaker")], []);
      if (!Array.isArray(reply) || reply.length !== 2) throw unreadable();
      const now = Number(reply[0]);
      if (!Number.isFinite(now)) throw unreadable();
      const raw: unknown = reply[1];
      const read = { breaker: raw === null ? null : asBreaker(parse(raw)), now, wall: now };
      return [name, read] as const;
    }));
    return new Map(reads);
  }

  async stepBreaker(
    name: string,
    event: BreakerEvent,
    claimMs: number,
  ): Promise<{ effect: BreakerEffect; read: BreakerRead }> {
    const reply = parse(
      await this.#script("tracefetchStepBreaker", [this.#provider(name, "breaker")], [
        JSON.stringify(event),
        claimMs,
        ...BREAKER_LIMITS,
      ]),
    ) as { now?: unknown; effect?: unknown; breaker?: unknown } | null;
    const now = reply?.now;
    if (typeof now !== "number") throw unreadable();
    return {
      // Built by the script in the same call: a malformed one would be a bug of ours.
      effect: reply?.effect as BreakerEffect,
      read: { breaker: asBreaker(reply?.breaker), now, wall: now },
    };
  }

  async probeResult(kind: ProbeKind, name: string, maxAgeMs: number): Promise<ProbeRecord | null> {
    const key = this.#provider(name, `probe:${kind}`);
    const raw = await this.#script("tracefetchProbeResult", [key], [maxAgeMs]);
    if (raw === null) return null;
    const record = parse(raw) as { storedAt?: unknown; value?: unknown } | null;
    if (typeof record?.storedAt !== "number" || !("value" in record)) throw unreadable();
    return { value: record.value, storedAt: record.storedAt };
  }

  async leaseProbe(kind: ProbeKind, name: string, ms: number): Promise<boolean> {
    const key = this.#provider(name, `lease:${kind}`);
    const client = this.#redis.client;
    return await this.#redis.send(() => client.set(key, "1", "PX", px(ms), "NX")) === "OK";
  }

  async storeProbeResult(kind: ProbeKind, name: string, value: unknown, ttlMs: number) {
    const keys = [this.#provider(name, `probe:${kind}`), this.#provider(name, `lease:${kind}`)];
    await this.#script("tracefetchStoreProbeResult", keys, [json(value), ttlMs]);
  }

  async claimFlight(key: string, id: string, leaseMs: number) {
    const reply = await this.#script("tracefetchClaimFlight", this.#flight(key, id), [
      id,
      px(leaseMs),
    ]);
    if (!Array.isArray(reply) || typeof reply[1] !== "string") throw unreadable();
    return { lead: reply[0] === 1, id: reply[1] };
  }

  async renewFlight(key: string, id: string, leaseMs: number) {
    const reply = await this.#script("tracefetchRenewFlight", this.#flight(key, id), [
      id,
      px(leaseMs),
    ]);
    if (!Array.isArray(reply)) throw unreadable();
    return { held: reply[0] === 1, waited: reply[1] === 1 };
  }

  async publishFlight(key: string, id: string, events: unknown[], last: boolean) {
    const args = [id, last ? "1" : "0", FLIGHT_LEASE_MS, ...events.map(json)];
    await this.#script("tracefetchPublishFlight", this.#flight(key, id), args);
  }

  async endFlight(key: string, id: string, leaseMs: number) {
    const reply = await this.#script("tracefetchEndFlight", this.#flight(key, id), [
      id,
      px(leaseMs),
    ]);
    return reply === 1;
  }

  async dropFlight(key: string, id: string) {
    await this.#script("tracefetchDropFlight", this.#flight(key, id), [id]);
  }

  async readFlight(key: string, id: string, from: number): Promise<FlightProgress> {
    const reply = await this.#script("tracefetchReadFlight", this.#flight(key, id), [id, from]);
    if (!Array.isArray(reply)) throw unreadable();
    const [state, ...events] = reply as unknown[];
    if (state !== "running" && state !== "ended" && state !== "orphaned") throw unreadable();
    return { events: events.map(parse), state };
  }

  async logSearch(key: string, { searches, cost }: LogAsk): Promise<LogVerdict> {
    const tag = `caller:${key}`;
    const keys = [taggedKey(this.prefix, tag, "log"), taggedKey(this.prefix, tag, "cost")];
    const reply = await this.#script("tracefetchLogSearch", keys, [
      searches?.limit ?? 0,
      px(searches?.windowMs ?? 1),
      crypto.randomUUID(),
      cost?.limit ?? 0,
      px(cost?.windowMs ?? 1),
      cost?.micros ?? 0,
      CALLER_COST_BUCKET_MS,
    ]);
    if (!Array.isArray(reply) || typeof reply[1] !== "number") throw unreadable();
    if (reply[0] === 1) return { admitted: true };
    const limit = reply[2];
    if (limit !== "searches_per_minute" && limit !== "cost_micros_per_day") throw unreadable();
    return { admitted: false, limit, retryAfterMs: reply[1] };
  }

  close(): Promise<void> {
    return this.#redis.close();
  }

  /** One of a provider's keys, under its hash tag. */
  #provider(name: string, rest: string): string {
    return taggedKey(this.prefix, `provider:${name}`, rest);
  }

  /** A flight's keys, in the order its scripts take them: lease, waited, events, ended. */
  #flight(key: string, id: string): [string, string, string, string] {
    const tag = `flight:${key}`;
    const at = (rest: string) => taggedKey(this.prefix, tag, rest);
    return [at("lease"), at("waited"), at(`${id}:events`), at(`${id}:ended`)];
  }

  #script(name: ScriptName, keys: string[], args: Array<string | number>): Promise<unknown> {
    return this.#redis.script(name, keys, args);
  }
}

/** PX takes a positive whole number of milliseconds. */
function px(ms: number): number {
  return Math.max(1, Math.ceil(ms));
}

/** A value as JSON text; undefined, which JSON has no word for, as null. */
function json(value: unknown): string {
  return JSON.stringify(value) ?? "null";
}
