/**
 * DurableStore: the StateStore (state-store.ts) of a Workers deployment, kept by Durable Objects of
 * the TRACEFETCH_STATE namespace (GatewayStateObject, src/runtime/state-object.ts) and called by
 * RPC. Sharded by name, never one global object: `provider:<name>` keeps one provider's breaker,
 * probe results and probe leases; `flight:<key>` (the HMAC digest GuardedState made) keeps one
 * flight; `callers:<n>`, one of CALLER_SHARDS chosen by the caller's digest, keeps the search logs
 * of the callers whose digests fall on it; `cache:<provider>` keeps one provider's cached answers
 * (DurableAnswerCache, durable-cache.ts, re-exported here). The binding is typed by what this file
 * calls, so it imports nothing from the runtime.
 *
 * Invariants:
 * - Every step runs inside the object that owns its key, at that object's clock: atomic across
 *   instances, and the same breakerStep as every other adapter.
 * - A search no one else asked for, over clean breakers, costs two billed calls, both on its
 *   flight object: claimFlight, then endFlight. Its leader also renews the lease once per
 *   FLIGHT_RENEW_MS it runs (flight-roles.ts), and breakers are read at most once a second per
 *   provider per isolate (the mirror).
 * - Every failure is a StoreFailure whose reason names the operation only: no object id, no key.
 * - Events and probe answers cross the RPC call as JSON values, as Redis stores them: a search's
 *   sanitised metadata is a null-prototype object, which workerd's RPC refuses to serialize.
 */
import type { BreakerEffect, BreakerEvent } from "../core/breaker.ts";
import type { BreakerRead } from "../core/suspension.ts";
import type { LogAsk, LogVerdict } from "../core/search-log.ts";
import { CALLER_SHARDS } from "../protocol/state-limits.ts";
import type { CacheAsk, CacheReply } from "./cache-object.ts";
import {
  type FlightProgress,
  type ProbeKind,
  type ProbeRecord,
  type StateStore,
  StoreFailure,
} from "./state-store.ts";

// The answer cache's adapter, over the same namespace: loaded by the same import on Workers.
export { DurableAnswerCache } from "./durable-cache.ts";

/** What an RPC method gives back: a stub's call is a promise, the object's own may be a value. */
type Rpc<T> = T | Promise<T>;

/**
 * The RPC methods of GatewayStateObject; each object answers for its own key only: a provider
 * object the first five, a flight object the others, each as the StateStore method of its name.
 */
export interface StateObjectRpc {
  readBreaker(): Rpc<BreakerRead>;
  stepBreaker(
    event: BreakerEvent,
    claimMs: number,
  ): Rpc<{ effect: BreakerEffect; read: BreakerRead }>;
  probeResult(kind: ProbeKind, maxAgeMs: number): Rpc<ProbeRecord | null>;
  leaseProbe(kind: ProbeKind, ms: number): Rpc<boolean>;
  storeProbeResult(kind: ProbeKind, value: unknown, ttlMs: number): Rpc<void>;
  claimFlight(id: string, leaseMs: number): Rpc<{ lead: boolean; id: string }>;
  renewFlight(id: string, leaseMs: number): Rpc<{ held: boolean; waited: boolean }>;
  publishFlight(id: string, events: unknown[], last: boolean): Rpc<void>;
  endFlight(id: string, leaseMs: number): Rpc<boolean>;
  dropFlight(id: string): Rpc<void>;
  readFlight(id: string, from: number, waitMs: number): Rpc<FlightProgress>;
  /** A caller shard's: one step of the search log of caller digest `key`. */
  logSearch(key: string, ask: LogAsk): Rpc<LogVerdict>;
  /** A provider's answer cache's (`cache:<provider>`, durable-cache.ts): one step of it. */
  answers(ask: CacheAsk): Rpc<CacheReply>;
}

/** The TRACEFETCH_STATE binding, as far as this store uses it. */
export interface StateNamespace {
  idFromName(name: string): unknown;
  /** The stub of the object whose id idFromName gave. */
  get(id: unknown): StateObjectRpc;
}

/** Whether a binding can be the TRACEFETCH_STATE namespace (and not, say, a var of that name). */
export function isStateNamespace(binding: unknown): binding is StateNamespace {
  const b = binding as Partial<Record<keyof StateNamespace, unknown>> | null;
  return typeof b === "object" && b !== null && typeof b.idFromName === "function" &&
    typeof b.get === "function";
}

export class DurableStore implements StateStore {
  readonly backend = "durable_objects" as const;

  constructor(private readonly namespace: StateNamespace) {}

  /**
   * One call per provider, in parallel. GuardedState mirrors each read for MAX_MIRROR_AGE_MS, so
   * an isolate calls a provider's object for its breaker at most once a second.
   */
  async breakers(names: readonly string[], signal: AbortSignal): Promise<Map<string, BreakerRead>> {
    const reads = await Promise.all(
      names.map(async (name) =>
        [
          name,
          await this.#call("readBreaker", signal, () => this.#provider(name).readBreaker()),
        ] as const
      ),
    );
    return new Map(reads);
  }

  stepBreaker(name: string, event: BreakerEvent, claimMs: number, signal: AbortSignal) {
    return this.#call(
      "stepBreaker",
      signal,
      () => this.#provider(name).stepBreaker(event, claimMs),
    );
  }

  probeResult(kind: ProbeKind, name: string, maxAgeMs: number, signal: AbortSignal) {
    return this.#call(
      "probeResult",
      signal,
      () => this.#provider(name).probeResult(kind, maxAgeMs),
    );
  }

  leaseProbe(kind: ProbeKind, name: string, ms: number, signal: AbortSignal) {
    return this.#call("leaseProbe", signal, () => this.#provider(name).leaseProbe(kind, ms));
  }

  storeProbeResult(
    kind: ProbeKind,
    name: string,
    value: unknown,
    ttlMs: number,
    signal: AbortSignal,
  ) {
    return this.#call(
      "storeProbeResult",
      signal,
      () => this.#provider(name).storeProbeResult(kind, asJson(value), ttlMs),
    );
  }

  claimFlight(key: string, id: string, leaseMs: number, signal: AbortSignal) {
    return this.#call("claimFlight", signal, () => this.#flight(key).claimFlight(id, leaseMs));
  }

  renewFlight(key: string, id: string, leaseMs: number, signal: AbortSignal) {
    return this.#call("renewFlight", signal, () => this.#flight(key).renewFlight(id, leaseMs));
  }

  publishFlight(key: string, id: string, events: unknown[], last: boolean, signal: AbortSignal) {
    return this.#call(
      "publishFlight",
      signal,
      () => this.#flight(key).publishFlight(id, asJson(events), last),
    );
  }

  endFlight(key: string, id: string, leaseMs: number, signal: AbortSignal) {
    return this.#call("endFlight", signal, () => this.#flight(key).endFlight(id, leaseMs));
  }

  dropFlight(key: string, id: string, signal: AbortSignal) {
    return this.#call("dropFlight", signal, () => this.#flight(key).dropFlight(id));
  }

  /** The object holds the call open until an event, the end, the lease's lapse or `waitMs`. */
  readFlight(key: string, id: string, from: number, waitMs: number, signal: AbortSignal) {
    return this.#call(
      "readFlight",
      signal,
      () => this.#flight(key).readFlight(id, from, waitMs),
    );
  }

  logSearch(key: string, ask: LogAsk, signal: AbortSignal) {
    // The digest is an HMAC, uniform in its bits: its first 32 spread callers evenly.
    const shard = parseInt(key.slice(0, 8), 16) % CALLER_SHARDS;
    return this.#call(
      "logSearch",
      signal,
      () => this.#object(`callers:${shard}`).logSearch(key, asJson(ask)),
    );
  }

  /** Stubs are made per call and hold no connection of their own. */
  close(): Promise<void> {
    return Promise.resolve();
  }

  #provider(name: string): StateObjectRpc {
    return this.#object(`provider:${name}`);
  }

  #flight(key: string): StateObjectRpc {
    return this.#object(`flight:${key}`);
  }

  /** A fresh stub each time: a stub an error broke stays broken, and one is cheap to make. */
  #object(name: string): StateObjectRpc {
    return this.namespace.get(this.namespace.idFromName(name));
  }

  async #call<T>(operation: string, signal: AbortSignal, call: () => Rpc<T>): Promise<T> {
    // An RPC call cannot be taken back: one GuardedState gave up on is not started.
    if (signal.aborted) {
      throw new StoreFailure(`a Durable Object call (${operation}) was abandoned`);
    }
    try {
      return await call();
    } catch (error) {
      throw new StoreFailure(`a Durable Object call (${operation}) failed: ${why(error)}`);
    }
  }
}

/**
 * A value as a JSON round trip makes it: plain objects and arrays only. The gateway's values are
 * JSON already; undefined, which JSON has no word for, becomes null.
 */
function asJson<T>(value: T): T {
  return JSON.parse(JSON.stringify(value) ?? "null");
}

/** What the runtime says of a failed call, without its message, which may name the object. */
function why(error: unknown): string {
  const flags = typeof error === "object" && error !== null
    ? error as { overloaded?: unknown; retryable?: unknown }
    : {};
  if (flags.overloaded === true) return "the object is overloaded";
  if (flags.retryable === true) return "a transient error";
  return "an error";
}
