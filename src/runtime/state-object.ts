/**
 * GatewayStateObject: the SQLite-backed Durable Object class of the TRACEFETCH_STATE namespace,
 * the store DurableStore (src/state/durable-state.ts) calls by RPC. Sharded by name: an object
 * named `provider:<name>` keeps that provider's breaker, probe results and probe leases; one named
 * `flight:<digest>` keeps that flight's lease, its waited marker and its events; one named
 * `callers:<n>` keeps the search logs of the callers whose digests fall on that shard; one named
 * `cache:<provider>` keeps that provider's cached answers (src/state/cache-object.ts, its own
 * module). Times are this object's clock (Date.now()), the store's clock of the state contract.
 *
 * Storage (the synchronous key-value API): `breaker` {breaker, keep}; `probe:<kind>` {value,
 * storedAt, expires}; `lease:<kind>` its end; `flight` {id, until, waited}; `event:<index>` one
 * published event of the flight holding `flight`, the index zero-padded so keys sort as indexes;
 * `caller:<digest>` {log, until} one caller's search log, garbage once `until` passed.
 *
 * Invariants:
 * - A step reads, decides and writes with no await in between: an object runs one call at a time
 *   between awaits, so each step is atomic across every instance that calls it.
 * - Breakers and leases are in durable storage: an object evicted from memory keeps them. Memory
 *   holds only the reads waiting for an event and an ended flight's events.
 * - Stored times are compared on every read: an alarm only deletes what lapsed, and one that runs
 *   late, or never, changes no answer.
 * - A flight that ends (its last publish, a drop, an end with no follower) deletes everything it
 *   stored, its alarm included; the alarm set at its claim deletes one whose leader died.
 */
import { DurableObject } from "cloudflare:workers";
import { type Breaker, type BreakerEvent, breakerStep } from "../core/breaker.ts";
import type { BreakerRead } from "../core/suspension.ts";
import type { LogAsk, LogVerdict, SearchLog } from "../core/search-log.ts";
import {
  FLIGHT_ENDED_KEEP_MS,
  FLIGHT_READ_WAIT_MS,
  FLIGHT_SWEEP_MS,
  STORED_BREAKER_IDLE_MS,
} from "../protocol/state-limits.ts";
import type { StateObjectRpc } from "../state/durable-state.ts";
import type { CacheAsk, CacheReply } from "../state/cache-object.ts";
import type { FlightProgress, ProbeKind, ProbeRecord } from "../state/state-store.ts";

type StoredBreaker = { breaker: Breaker; keep: number };
type StoredProbe = ProbeRecord & { expires: number };
type Flight = { id: string; until: number; waited: boolean };
type StoredLog = { log: SearchLog; until: number };

const BREAKER = "breaker";
const PROBE = "probe:";
const LEASE = "lease:";
const FLIGHT = "flight";
const EVENT = "event:";
const CALLER = "caller:";
/** Digits of an event's index in its key: more than any flight publishes. */
const INDEX_DIGITS = 8;

/** search-log.ts, loaded with the first caller's search this object logs: its own module. */
let searchLog: Promise<typeof import("../core/search-log.ts")> | null = null;
/** cache-object.ts, loaded with a provider cache's first call: the main module carries none of it. */
let answerCache: Promise<typeof import("../state/cache-object.ts")> | null = null;

const eventKey = (index: number) => `${EVENT}${String(index).padStart(INDEX_DIGITS, "0")}`;

export class GatewayStateObject extends DurableObject implements StateObjectRpc {
  /** How long after a claim, or a lease a flight outlived, its alarm looks for a dead leader. */
  protected readonly flightSweepMs: number = FLIGHT_SWEEP_MS;
  /** Reads waiting for a flight's next event, by flight id. */
  readonly #waiting = new Map<string, Set<() => void>>();
  /** Events of flights that ended, kept for followers between two reads; storage has none. */
  readonly #ended = new Map<string, { events: unknown[]; at: number }>();

  get #kv() {
    return this.ctx.storage.kv;
  }

  readBreaker(): BreakerRead {
    const now = Date.now();
    return { breaker: this.#kv.get<StoredBreaker>(BREAKER)?.breaker ?? null, now, wall: now };
  }

  async stepBreaker(event: BreakerEvent, claimMs: number) {
    const now = Date.now();
    const before = this.#kv.get<StoredBreaker>(BREAKER)?.breaker ?? null;
    const { breaker, effect } = breakerStep(before, event, { now, wall: now }, claimMs);
    const read = { breaker, now, wall: now };
    // A step that changed nothing writes nothing: rows written are what storage bills.
    if (breaker === before) return { effect, read };
    if (breaker === null) {
      this.#kv.delete(BREAKER);
      return { effect, read };
    }
    const keep = Math.max(now, breaker.until ?? 0, breaker.probeUntil ?? 0) +
      STORED_BREAKER_IDLE_MS;
    this.#kv.put(BREAKER, { breaker, keep } satisfies StoredBreaker);
    await this.#sweepBy(keep);
    return { effect, read };
  }

  probeResult(kind: ProbeKind, maxAgeMs: number): ProbeRecord | null {
    const found = this.#kv.get<StoredProbe>(PROBE + kind);
    const now = Date.now();
    if (found === undefined || now >= found.expires || now - found.storedAt > maxAgeMs) return null;
    return { value: found.value, storedAt: found.storedAt };
  }

  async leaseProbe(kind: ProbeKind, ms: number): Promise<boolean> {
    const now = Date.now();
    if ((this.#kv.get<number>(LEASE + kind) ?? 0) > now) return false;
    this.#kv.put(LEASE + kind, now + ms);
    await this.#sweepBy(now + ms);
    return true;
  }

  async storeProbeResult(kind: ProbeKind, value: unknown, ttlMs: number): Promise<void> {
    const now = Date.now();
    const stored: StoredProbe = { value, storedAt: now, expires: now + ttlMs };
    this.#kv.put(PROBE + kind, stored);
    this.#kv.delete(LEASE + kind);
    await this.#sweepBy(stored.expires);
  }

  async claimFlight(id: string, leaseMs: number): Promise<{ lead: boolean; id: string }> {
    const now = Date.now();
    const flight = this.#kv.get<Flight>(FLIGHT);
    if (flight !== undefined && now < flight.until) {
      if (!flight.waited) this.#kv.put(FLIGHT, { ...flight, waited: true } satisfies Flight);
      return { lead: false, id: flight.id };
    }
    if (flight !== undefined) {
      // A lapsed flight's leftovers: its followers read `orphaned` from now on.
      for (const [key] of this.#kv.list({ prefix: EVENT })) this.#kv.delete(key);
      this.#wake(flight.id);
    }
    this.#kv.put(FLIGHT, { id, until: now + leaseMs, waited: false } satisfies Flight);
    await this.#sweepBy(now + this.flightSweepMs);
    return { lead: true, id };
  }

  renewFlight(id: string, leaseMs: number): { held: boolean; waited: boolean } {
    const now = Date.now();
    const flight = this.#kv.get<Flight>(FLIGHT);
    if (flight === undefined || flight.id !== id || now >= flight.until) {
      return { held: false, waited: false };
    }
    this.#kv.put(FLIGHT, { ...flight, until: now + leaseMs } satisfies Flight);
    return { held: true, waited: flight.waited };
  }

  async publishFlight(id: string, events: unknown[], last: boolean): Promise<void> {
    if (this.#kv.get<Flight>(FLIGHT)?.id !== id) return;
    if (!last) {
      let next = this.#eventCount();
      for (const event of events) this.#kv.put(eventKey(next++), event);
      this.#wake(id);
      return;
    }
    this.#forget(Date.now());
    this.#ended.set(id, { events: [...this.#stored(0), ...events], at: Date.now() });
    this.#wake(id);
    await this.ctx.storage.deleteAll();
  }

  async endFlight(id: string, leaseMs: number): Promise<boolean> {
    const now = Date.now();
    const flight = this.#kv.get<Flight>(FLIGHT);
    if (flight === undefined || flight.id !== id) return false;
    if (now < flight.until && flight.waited) {
      // A follower waits: the lease is kept while the leader publishes the end.
      this.#kv.put(FLIGHT, { ...flight, until: now + leaseMs } satisfies Flight);
      return true;
    }
    this.#wake(id);
    await this.ctx.storage.deleteAll();
    return false;
  }

  async dropFlight(id: string): Promise<void> {
    if (this.#kv.get<Flight>(FLIGHT)?.id !== id) return;
    this.#wake(id);
    await this.ctx.storage.deleteAll();
  }

  /** Holds the call open, up to `waitMs`, until an event, the end, or the lease's lapse. */
  async readFlight(id: string, from: number, waitMs: number): Promise<FlightProgress> {
    // A held call costs duration: never longer than a follower asks for by default.
    const deadline = Date.now() + Math.min(Math.max(0, waitMs), FLIGHT_READ_WAIT_MS);
    for (;;) {
      const now = Date.now();
      const { progress, until } = this.#progress(id, from, now);
      if (progress.state !== "running" || progress.events.length > 0 || now >= deadline) {
        return progress;
      }
      await this.#nextEvent(id, Math.min(deadline, until) - now);
    }
  }

  async logSearch(key: string, ask: LogAsk): Promise<LogVerdict> {
    const { EMPTY_LOG, logUntil, searchLogStep } = await (searchLog ??= import(
      "../core/search-log.ts"
    ));
    // Read, step and write with no await in between, as every step here.
    const now = Date.now();
    const before = this.#kv.get<StoredLog>(CALLER + key)?.log ?? EMPTY_LOG;
    const { log, verdict } = searchLogStep(before, now, ask);
    // A refusal writes nothing: rows written are what storage bills.
    if (!verdict.admitted) return verdict;
    const until = logUntil(log, ask);
    this.#kv.put(CALLER + key, { log, until } satisfies StoredLog);
    await this.#sweepBy(until);
    return verdict;
  }

  /** A provider's answer cache (`cache:<provider>`): one step of cache-object.ts. */
  async answers(ask: CacheAsk): Promise<CacheReply> {
    return (await (answerCache ??= import("../state/cache-object.ts"))).cacheStep(this.ctx, ask);
  }

  /**
   * The backstop, and garbage collection: deletes a flight whose lease lapsed, and what lapsed of a
   * provider's state, of callers' logs or of cached answers; comes back when what is left will have
   * lapsed (an answer stored meanwhile may bring it sooner, cache-object.ts).
   */
  async alarm(): Promise<void> {
    const now = Date.now();
    const flight = this.#kv.get<Flight>(FLIGHT);
    if (flight !== undefined && now < flight.until) {
      await this.ctx.storage.setAlarm(flight.until + this.flightSweepMs);
      return;
    }
    if (flight !== undefined) {
      this.#wake(flight.id);
      await this.ctx.storage.deleteAll();
      return;
    }
    let last = 0;
    for (const [key, value] of this.#kv.list()) {
      const lapses = lapsesAt(key, value);
      if (lapses <= now) this.#kv.delete(key);
      else last = Math.max(last, lapses);
    }
    if (last === 0) await this.ctx.storage.deleteAll();
    else await this.ctx.storage.setAlarm(last);
  }

  #progress(id: string, from: number, now: number): { progress: FlightProgress; until: number } {
    this.#forget(now);
    const ended = this.#ended.get(id);
    if (ended !== undefined) {
      return { progress: { events: ended.events.slice(from), state: "ended" }, until: now };
    }
    const flight = this.#kv.get<Flight>(FLIGHT);
    if (flight === undefined || flight.id !== id) {
      return { progress: { events: [], state: "orphaned" }, until: now };
    }
    const state = now < flight.until ? "running" : "orphaned";
    return { progress: { events: this.#stored(from), state }, until: flight.until };
  }

  /** The stored events of the flight holding `flight`, from index `from`. */
  #stored(from: number): unknown[] {
    return [...this.#kv.list({ prefix: EVENT, start: eventKey(from) })].map(([, value]) => value);
  }

  #eventCount(): number {
    for (const [key] of this.#kv.list({ prefix: EVENT, reverse: true, limit: 1 })) {
      return Number(key.slice(EVENT.length)) + 1;
    }
    return 0;
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

  /**
   * Makes sure an alarm is set, for `at` when none is: when it runs, the alarm sets the next one
   * for what is left, so one write serves many steps.
   */
  async #sweepBy(at: number): Promise<void> {
    const current = await this.ctx.storage.getAlarm();
    if (current === null) await this.ctx.storage.setAlarm(at);
  }
}

/**
 * When a provider's stored entry or a caller's log is garbage. Anything else names its own end: a
 * probe answer, a cached answer or a cache's generation (cache-object.ts); else it is at once.
 */
function lapsesAt(key: string, value: unknown): number {
  if (key === BREAKER) return (value as StoredBreaker).keep;
  if (key.startsWith(LEASE)) return value as number;
  if (key.startsWith(CALLER)) return (value as StoredLog).until;
  return (value as Partial<StoredProbe>).expires ?? 0;
}
