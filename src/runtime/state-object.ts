/**
 * GatewayStateObject: the SQLite-backed Durable Object class of the TRACEFETCH_STATE namespace,
 * which DurableStore (src/state/durable-state.ts) calls by RPC, one object per shard name:
 * `provider:<name>`, `flight:<digest>`, `callers:<n>`, `cache:<provider>`. A shell over the steps
 * of src/state (state-shard.ts, cache-object.ts), each loaded with the object's first call of its
 * kind so the worker's main module carries none of them; its clock, Date.now(), is the store's.
 */
import { DurableObject } from "cloudflare:workers";
import type { BreakerEvent } from "../core/breaker.ts";
import type { LogAsk } from "../core/search-log.ts";
import { lazy } from "../core/lazy-module.ts";
import { FLIGHT_SWEEP_MS } from "../protocol/state-limits.ts";
import type { StateObjectRpc } from "../state/durable-state.ts";
import type { CacheAsk } from "../state/cache-object.ts";
import type { StateShard } from "../state/state-shard.ts";
import type { ProbeKind } from "../state/state-store.ts";

const shardModule = lazy(() => import("../state/state-shard.ts"));
const cacheModule = lazy(() => import("../state/cache-object.ts"));

export class GatewayStateObject extends DurableObject implements StateObjectRpc {
  /** How long after a claim, or a lease a flight outlived, its alarm looks for a dead leader. */
  protected readonly flightSweepMs: number = FLIGHT_SWEEP_MS;
  #shard: StateShard | null = null;

  /** This object's shard, made with its first call; storage is read only in a step. */
  async #steps(): Promise<StateShard> {
    const { StateShard } = await shardModule();
    const sweepMs = () => this.flightSweepMs;
    return this.#shard ??= new StateShard(this.ctx.storage, { now: Date.now, sweepMs });
  }

  async readBreaker() {
    return (await this.#steps()).readBreaker();
  }
  async stepBreaker(event: BreakerEvent, claimMs: number) {
    return (await this.#steps()).stepBreaker(event, claimMs);
  }
  async probeResult(kind: ProbeKind, maxAgeMs: number) {
    return (await this.#steps()).probeResult(kind, maxAgeMs);
  }
  async leaseProbe(kind: ProbeKind, ms: number) {
    return (await this.#steps()).leaseProbe(kind, ms);
  }
  async storeProbeResult(kind: ProbeKind, value: unknown, ttlMs: number) {
    return (await this.#steps()).storeProbeResult(kind, value, ttlMs);
  }
  async claimFlight(id: string, leaseMs: number) {
    return (await this.#steps()).claimFlight(id, leaseMs);
  }
  async renewFlight(id: string, leaseMs: number) {
    return (await this.#steps()).renewFlight(id, leaseMs);
  }
  async publishFlight(id: string, events: unknown[], last: boolean) {
    return (await this.#steps()).publishFlight(id, events, last);
  }
  async endFlight(id: string, leaseMs: number) {
    return (await this.#steps()).endFlight(id, leaseMs);
  }
  async dropFlight(id: string) {
    return (await this.#steps()).dropFlight(id);
  }
  async readFlight(id: string, from: number, waitMs: number) {
    return (await this.#steps()).readFlight(id, from, waitMs);
  }
  async logSearch(key: string, ask: LogAsk) {
    return (await this.#steps()).logSearch(key, ask);
  }

  /** A provider's answer cache (`cache:<provider>`): one step of cache-object.ts. */
  async answers(ask: CacheAsk) {
    return (await cacheModule()).cacheStep(this.ctx, ask);
  }

  /** Garbage collection of every kind of shard: the flight's, the provider's, the cache's. */
  async alarm(): Promise<void> {
    await (await this.#steps()).alarm();
  }
}
