/**
 * The state machines of a shard of the shared state, written once: a provider's breaker, probe
 * results and probe leases, one flight's lease and events, callers' search logs. Each step is a
 * pure function of a synchronous key-value storage and the store's time: it reads, decides and
 * writes with no await, so a caller that runs one step at a time makes each atomic. What the step
 * asks of its holder afterwards (an alarm, waking a flight's readers, deleting everything) is in
 * its answer; StateShard (state-shard.ts) does it, for the Durable Object and the memory store.
 *
 * Storage: `breaker` {breaker, keep}; `probe:<kind>` {value, storedAt, expires}; `lease:<kind>`
 * its end; `flight` {id, until, waited}; `event:<index>` one published event of the flight holding
 * `flight`, the index zero-padded so keys sort as indexes; `caller:<digest>` {log, until} one
 * caller's search log, garbage once `until` passed.
 *
 * Invariants:
 * - Stored times are compared on every read: an alarm only deletes what lapsed, and one that runs
 *   late, or never, changes no answer.
 * - A flight that ends (its last publish, a drop, an end with no follower) asks for everything it
 *   stored to be deleted.
 * - A step that changes nothing writes nothing: rows written are what a Durable Object bills.
 */
import { type Breaker, type BreakerEvent, breakerStep } from "../core/breaker.ts";
import type { BreakerRead } from "../core/suspension.ts";
import type { SearchLog } from "../core/search-log.ts";
import { STORED_BREAKER_IDLE_MS } from "../protocol/state-limits.ts";
import type { FlightProgress, ProbeKind, ProbeRecord } from "./state-store.ts";

/** A Durable Object's synchronous key-value storage, as far as the steps use it. */
export interface ShardKv {
  get<T = unknown>(key: string): T | undefined;
  put(key: string, value: unknown): void;
  delete(key: string): boolean;
  list<T = unknown>(
    options?: { prefix?: string; start?: string; reverse?: boolean; limit?: number },
  ): Iterable<[string, T]>;
}

/** A step's answer, and what its holder does after it. */
export type Step<T> = {
  result: T;
  /** An alarm by then, when none is set. */
  sweepBy?: number;
  /** The alarm at exactly then (the alarm's own step). */
  alarmAt?: number;
  /** Wake the reads waiting on this flight. */
  wake?: string;
  /** Delete everything stored, the alarm included. */
  clear?: boolean;
  /** The events of a flight that ended, kept in memory for its followers. */
  ended?: { id: string; events: unknown[] };
};

type StoredBreaker = { breaker: Breaker; keep: number };
type StoredProbe = ProbeRecord & { expires: number };
type Flight = { id: string; until: number; waited: boolean };
/** One caller's log as stored (log-step.ts writes it). */
export type StoredLog = { log: SearchLog; until: number };

const BREAKER = "breaker";
const PROBE = "probe:";
const LEASE = "lease:";
const FLIGHT = "flight";
const EVENT = "event:";
export const CALLER = "caller:";
/** Digits of an event's index in its key: more than any flight publishes. */
const INDEX_DIGITS = 8;

const eventKey = (index: number) => `${EVENT}${String(index).padStart(INDEX_DIGITS, "0")}`;

/**
 * A ShardKv over a plain map, for a holder in this process that keeps its values to itself (the
 * memory adapter): no copies, keys listed in order.
 */
export function mapKv(map = new Map<string, unknown>()): ShardKv {
  return {
    get: <T>(key: string) => map.get(key) as T | undefined,
    put: (key, value) => void map.set(key, value),
    delete: (key) => map.delete(key),
    list: <T>(options: Parameters<ShardKv["list"]>[0] = {}) => {
      const { prefix = "", start = "", reverse = false, limit = Infinity } = options;
      const keys = [...map.keys()].filter((key) => key.startsWith(prefix) && key >= start).sort();
      if (reverse) keys.reverse();
      return keys.slice(0, limit).map((key) => [key, map.get(key)] as [string, T]);
    },
  };
}

/** The breaker; `wall` is the wall clock's moment, the store's own clock (`now`) unless given. */
export function readBreaker(kv: ShardKv, now: number, wall = now): BreakerRead {
  return { breaker: kv.get<StoredBreaker>(BREAKER)?.breaker ?? null, now, wall };
}

export function stepBreaker(
  kv: ShardKv,
  now: number,
  event: BreakerEvent,
  claimMs: number,
  wall = now,
) {
  const before = kv.get<StoredBreaker>(BREAKER)?.breaker ?? null;
  const { breaker, effect } = breakerStep(before, event, { now, wall }, claimMs);
  const result = { effect, read: { breaker, now, wall } };
  if (breaker === before) return { result };
  if (breaker === null) {
    kv.delete(BREAKER);
    return { result };
  }
  const keep = Math.max(now, breaker.until ?? 0, breaker.probeUntil ?? 0) + STORED_BREAKER_IDLE_MS;
  kv.put(BREAKER, { breaker, keep } satisfies StoredBreaker);
  return { result, sweepBy: keep };
}

export function probeResult(
  kv: ShardKv,
  now: number,
  kind: ProbeKind,
  maxAgeMs: number,
): ProbeRecord | null {
  const found = kv.get<StoredProbe>(PROBE + kind);
  if (found === undefined || now >= found.expires || now - found.storedAt > maxAgeMs) return null;
  return { value: found.value, storedAt: found.storedAt };
}

export function leaseProbe(kv: ShardKv, now: number, kind: ProbeKind, ms: number): Step<boolean> {
  if ((kv.get<number>(LEASE + kind) ?? 0) > now) return { result: false };
  kv.put(LEASE + kind, now + ms);
  return { result: true, sweepBy: now + ms };
}

export function storeProbeResult(
  kv: ShardKv,
  now: number,
  kind: ProbeKind,
  value: unknown,
  ttlMs: number,
): Step<void> {
  const stored: StoredProbe = { value, storedAt: now, expires: now + ttlMs };
  kv.put(PROBE + kind, stored);
  kv.delete(LEASE + kind);
  return { result: undefined, sweepBy: stored.expires };
}

/** Leads as `id` when no lease is held; `sweepMs` after, the alarm looks for a dead leader. */
export function claimFlight(
  kv: ShardKv,
  now: number,
  id: string,
  leaseMs: number,
  sweepMs: number,
): Step<{ lead: boolean; id: string }> {
  const flight = kv.get<Flight>(FLIGHT);
  if (flight !== undefined && now < flight.until) {
    if (!flight.waited) kv.put(FLIGHT, { ...flight, waited: true } satisfies Flight);
    return { result: { lead: false, id: flight.id } };
  }
  // A lapsed flight's leftovers go: its followers read `orphaned` from now on.
  if (flight !== undefined) { for (const [key] of kv.list({ prefix: EVENT })) kv.delete(key); }
  kv.put(FLIGHT, { id, until: now + leaseMs, waited: false } satisfies Flight);
  return {
    result: { lead: true, id },
    sweepBy: now + sweepMs,
    ...(flight !== undefined ? { wake: flight.id } : {}),
  };
}

export function renewFlight(
  kv: ShardKv,
  now: number,
  id: string,
  leaseMs: number,
): { held: boolean; waited: boolean } {
  const flight = kv.get<Flight>(FLIGHT);
  if (flight === undefined || flight.id !== id || now >= flight.until) {
    return { held: false, waited: false };
  }
  kv.put(FLIGHT, { ...flight, until: now + leaseMs } satisfies Flight);
  return { held: true, waited: flight.waited };
}

/** Appends while `id` holds a live lease (a flight that lapsed takes no more); `last` ends it. */
export function publishFlight(
  kv: ShardKv,
  now: number,
  id: string,
  events: unknown[],
  last: boolean,
): Step<void> {
  const flight = kv.get<Flight>(FLIGHT);
  if (flight === undefined || flight.id !== id || now >= flight.until) return { result: undefined };
  if (!last) {
    let next = eventCount(kv);
    for (const event of events) kv.put(eventKey(next++), event);
    return { result: undefined, wake: id };
  }
  return {
    result: undefined,
    ended: { id, events: [...storedEvents(kv, 0), ...events] },
    wake: id,
    clear: true,
  };
}

export function endFlight(kv: ShardKv, now: number, id: string, leaseMs: number): Step<boolean> {
  const flight = kv.get<Flight>(FLIGHT);
  if (flight === undefined || flight.id !== id) return { result: false };
  if (now < flight.until && flight.waited) {
    // A follower waits: the lease is kept while the leader publishes the end.
    kv.put(FLIGHT, { ...flight, until: now + leaseMs } satisfies Flight);
    return { result: true };
  }
  return { result: false, wake: id, clear: true };
}

export function dropFlight(kv: ShardKv, id: string): Step<void> {
  if (kv.get<Flight>(FLIGHT)?.id !== id) return { result: undefined };
  return { result: undefined, wake: id, clear: true };
}

/** Where flight `id` stands in storage, and until when a read may wait on it. */
export function flightProgress(
  kv: ShardKv,
  now: number,
  id: string,
  from: number,
): { progress: FlightProgress; until: number } {
  const flight = kv.get<Flight>(FLIGHT);
  if (flight === undefined || flight.id !== id) {
    return { progress: { events: [], state: "orphaned" }, until: now };
  }
  // An orphaned flight's events are no one's to read: its followers run the search themselves.
  if (now >= flight.until) return { progress: { events: [], state: "orphaned" }, until: now };
  return { progress: { events: storedEvents(kv, from), state: "running" }, until: flight.until };
}

/**
 * The backstop, and garbage collection: deletes a flight whose lease lapsed, and what lapsed of a
 * provider's state, of callers' logs or of cached answers; comes back when what is left will have
 * lapsed.
 */
export function alarm(kv: ShardKv, now: number, sweepMs: number): Step<void> {
  const flight = kv.get<Flight>(FLIGHT);
  if (flight !== undefined && now < flight.until) {
    return { result: undefined, alarmAt: flight.until + sweepMs };
  }
  if (flight !== undefined) return { result: undefined, wake: flight.id, clear: true };
  let last = 0;
  for (const [key, value] of kv.list()) {
    const lapses = lapsesAt(key, value);
    if (lapses <= now) kv.delete(key);
    else last = Math.max(last, lapses);
  }
  return last === 0 ? { result: undefined, clear: true } : { result: undefined, alarmAt: last };
}

/** The stored events of the flight holding `flight`, from index `from`. */
function storedEvents(kv: ShardKv, from: number): unknown[] {
  return [...kv.list({ prefix: EVENT, start: eventKey(from) })].map(([, value]) => value);
}

function eventCount(kv: ShardKv): number {
  for (const [key] of kv.list({ prefix: EVENT, reverse: true, limit: 1 })) {
    return Number(key.slice(EVENT.length)) + 1;
  }
  return 0;
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
