/** How every Redis client of the gateway connects: the state's, and the answer cache's. */
export const REDIS_OPTIONS = {
  // While disconnected a command fails at once: a queued one would only wait out the timeout.
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
  commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
  retryStrategy: (times: number) =>
    Math.min(REDIS_RECONNECT_FIRST_MS * 2 ** (times - 1), REDIS_RECONNECT_MAX_MS),
  // Every reply here is a string, an integer or an array, alike in RESP2 and RESP3; RESP2 needs
  // no HELLO, so servers before Redis 6 and proxies speak it too.
  protocol: 2,
} satisfies RedisOptions;

/**
 * The Redis adapter of the shared state (state-store.ts), over one ioredis connection: breakers,
 * probe results and their leases, and flights, each operation one round trip, every update that
 * reads first a Lua script (redis-scripts.ts) run at the store's clock.
 *
 * Keys, each under the prefix (TRACEFETCH_STATE_PREFIX):
 * - `breaker:<provider>`: the breaker's JSON, until STORED_BREAKER_IDLE_MS past the last moment it
 *   names; `probe:<kind>:<provider>`: `{"storedAt":…,"value":…}` for its TTL;
 *   `lease:<kind>:<provider>`: the probe lease (SET NX PX).
 * - `flight:<key>`: the lease, holding the leader's id; `flight:<key>:<id>:waited`, `:events` (a
 *   list of JSON texts) and `:ended`: kept with the lease, and FLIGHT_LEASE_MS after the end.
 * - `caller:<digest>`: a caller's search log (a sorted set of times), and `caller:<digest>:cost`
 *   its cost by the minute (a hash), each for its window past the last search it counts.
 *
 * Invariants:
 * - Every key carries a TTL; none is read as a clock.
 * - A call fails at once while the connection is down (no offline queue, no retries of a command),
 *   and the client reconnects in the background; the first connection is waited for, once.
 * - A failure reaches the caller as StoreFailure with a reason that names no URL, host, port,
 *   password or key; nothing is logged per failure.
 * - ioredis cannot withdraw a command once sent, so the calls take no AbortSignal: GuardedState
 *   bounds the wait, and a command left behind is settled by REDIS_COMMAND_TIMEOUT_MS.
 */
import { Redis, type RedisOptions } from "ioredis";
import type { BreakerEffect, BreakerEvent } from "../core/breaker.ts";
import type { BreakerRead } from "../core/suspension.ts";
import { CALLER_COST_BUCKET_MS } from "../protocol/limits.ts";
import type { LogAsk, LogVerdict } from "../core/search-log.ts";
import {
  FLIGHT_LEASE_MS,
  REDIS_COMMAND_TIMEOUT_MS,
  REDIS_CONNECT_TIMEOUT_MS,
  REDIS_QUIT_MS,
  REDIS_RECONNECT_FIRST_MS,
  REDIS_RECONNECT_MAX_MS,
} from "../protocol/state-limits.ts";
import {
  asBreaker,
  BREAKER_LIMITS,
  parse,
  type ScriptName,
  SCRIPTS,
  unreadable,
} from "./redis-scripts.ts";
import {
  type FlightProgress,
  type ProbeKind,
  type ProbeRecord,
  type StateStore,
  StoreFailure,
} from "./state-store.ts";

type ScriptCall = (...args: Array<string | number>) => Promise<unknown>;

export class RedisStore implements StateStore {
  readonly backend = "redis" as const;
  readonly #client: Redis;
  /** Settles once the first connection attempt has: ready, refused, or given up. */
  readonly #firstAttempt: Promise<void>;
  /** What went wrong with the connection since it was last ready (an error code), if anything. */
  #lastError: string | null = null;
  #closing: Promise<void> | null = null;

  /** `url`: TRACEFETCH_STATE_URL (redis:// or rediss://); `prefix`: TRACEFETCH_STATE_PREFIX. */
  constructor(url: string, private readonly prefix: string) {
    this.#client = new Redis(url, REDIS_OPTIONS);
    for (const [name, lua] of Object.entries(SCRIPTS)) this.#client.defineCommand(name, { lua });
    // Listened to so that no error goes unhandled; the reason is told by the next failed call.
    this.#client.on("error", (error: unknown) => (this.#lastError = errorCode(error)));
    this.#client.on("ready", () => (this.#lastError = null));
    this.#firstAttempt = new Promise<void>((resolve) => {
      for (const event of ["ready", "close", "end"]) this.#client.once(event, () => resolve());
    });
  }

  async breakers(names: readonly string[]): Promise<Map<string, BreakerRead>> {
    const out = new Map<string, BreakerRead>();
    if (names.length === 0) return out;
    const keys = names.map((name) => this.#key("breaker", name));
    const reply = await this.#script("tracefetchBreakers", keys, []);
    if (!Array.isArray(reply) || reply.length !== names.length + 1) throw unreadable();
    const now = Number(reply[0]);
    if (!Number.isFinite(now)) throw unreadable();
    names.forEach((name, i) => {
      const raw: unknown = reply[i + 1];
      out.set(name, { breaker: raw === null ? null : asBreaker(parse(raw)), now, wall: now });
    });
    return out;
  }

  async stepBreaker(
    name: string,
    event: BreakerEvent,
    claimMs: number,
  ): Promise<{ effect: BreakerEffect; read: BreakerRead }> {
    const reply = parse(
      await this.#script("tracefetchStepBreaker", [this.#key("breaker", name)], [
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
    const key = this.#key("probe", `${kind}:${name}`);
    const raw = await this.#script("tracefetchProbeResult", [key], [maxAgeMs]);
    if (raw === null) return null;
    const record = parse(raw) as { storedAt?: unknown; value?: unknown } | null;
    if (typeof record?.storedAt !== "number" || !("value" in record)) throw unreadable();
    return { value: record.value, storedAt: record.storedAt };
  }

  async leaseProbe(kind: ProbeKind, name: string, ms: number): Promise<boolean> {
    const key = this.#key("lease", `${kind}:${name}`);
    return await this.#send(() => this.#client.set(key, "1", "PX", px(ms), "NX")) === "OK";
  }

  async storeProbeResult(kind: ProbeKind, name: string, value: unknown, ttlMs: number) {
    const keys = [this.#key("probe", `${kind}:${name}`), this.#key("lease", `${kind}:${name}`)];
    await this.#script("tracefetchStoreProbeResult", keys, [json(value), ttlMs]);
  }

  async claimFlight(key: string, id: string, leaseMs: number) {
    const [lease] = this.#flight(key, id);
    const reply = await this.#script("tracefetchClaimFlight", [lease], [
      id,
      px(leaseMs),
      `${lease}:`,
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
    const log = `${this.prefix}caller:${key}`;
    const reply = await this.#script("tracefetchLogSearch", [log, `${log}:cost`], [
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

  /** Says QUIT when connected, waiting at most REDIS_QUIT_MS, then drops the connection. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      const client = this.#client;
      if (client.status === "ready") {
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([
          client.quit().catch(() => undefined),
          new Promise<void>((resolve) => (timer = setTimeout(resolve, REDIS_QUIT_MS))),
        ]);
        clearTimeout(timer);
      }
      if (client.status !== "end") client.disconnect();
    })();
    return this.#closing;
  }

  #key(kind: "breaker" | "probe" | "lease", name: string): string {
    return `${this.prefix}${kind}:${name}`;
  }

  /** A flight's keys, in the order its scripts take them: lease, waited, events, ended. */
  #flight(key: string, id: string): [string, string, string, string] {
    const lease = `${this.prefix}flight:${key}`;
    return [lease, `${lease}:${id}:waited`, `${lease}:${id}:events`, `${lease}:${id}:ended`];
  }

  #script(name: ScriptName, keys: string[], args: Array<string | number>): Promise<unknown> {
    // defineCommand adds each script as a method; called with the number of keys first.
    const call = (this.#client as unknown as Record<ScriptName, ScriptCall>)[name];
    return this.#send(() => call.call(this.#client, keys.length, ...keys, ...args));
  }

  async #send<T>(command: () => Promise<T>): Promise<T> {
    if (this.#closing !== null) throw new StoreFailure("the store's connection was closed");
    await this.#firstAttempt;
    try {
      return await command();
    } catch (error) {
      throw new StoreFailure(this.#reason(error));
    }
  }

  /** Why a command failed, in words that name nothing of the store's address or secrets. */
  #reason(error: unknown): string {
    if (this.#closing !== null) return "the store's connection was closed";
    const message = error instanceof Error ? error.message : "";
    if (error instanceof Error && error.name === "ReplyError") return replyReason(message);
    if (message === "Command timed out") return "the store did not answer in time";
    const code = this.#lastError ?? "";
    if (/^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED)/.test(code)) {
      return "the TLS handshake with the store failed";
    }
    return CONNECTION_REASONS[code] ?? "the store closed the connection";
  }
}

/** What a failed call is said to be, by the last error of the connection (none: it closed). */
const CONNECTION_REASONS: Record<string, string> = {
  ECONNREFUSED: "the store refused the connection",
  ETIMEDOUT: "the store did not accept the connection in time",
  ENOTFOUND: "the store's host name did not resolve",
  EAI_AGAIN: "the store's host name did not resolve",
  EHOSTUNREACH: "the store's network is unreachable",
  ENETUNREACH: "the store's network is unreachable",
  NOAUTH: "the store refused the credentials",
  WRONGPASS: "the store refused the credentials",
};

/**
 * An error's code (ECONNREFUSED), a Redis error's first word (WRONGPASS), or for a host tried at
 * several addresses (an AggregateError), the first address's.
 */
function errorCode(error: unknown): string | null {
  if (typeof error !== "object" || error === null) return null;
  const { code, message, errors } = error as {
    code?: unknown;
    message?: unknown;
    errors?: unknown;
  };
  if (typeof code === "string") return code;
  if (Array.isArray(errors)) return errorCode(errors[0]);
  return typeof message === "string" ? /^[A-Z]+/.exec(message)?.[0] ?? null : null;
}

function replyReason(message: string): string {
  if (/^(NOAUTH|WRONGPASS|NOPERM)/.test(message)) return "the store refused the credentials";
  if (message.startsWith("LOADING")) return "the store is still loading its data";
  if (message.startsWith("READONLY")) return "the store is a read-only replica";
  if (message.startsWith("OOM")) return "the store is out of memory";
  return "the store answered with an error";
}

/** PX takes a positive whole number of milliseconds. */
function px(ms: number): number {
  return Math.max(1, Math.ceil(ms));
}

/** A value as JSON text; undefined, which JSON has no word for, as null. */
function json(value: unknown): string {
  return JSON.stringify(value) ?? "null";
}
