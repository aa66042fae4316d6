/**
 * One provider's shared answer cache as its Durable Object keeps it (`cache:<provider>` of the
 * TRACEFETCH_STATE namespace): the step GatewayStateObject's `answers` runs, a module of its own
 * that the object loads with its first cache call, so the worker's main module carries none of it.
 * DurableAnswerCache (durable-cache.ts) is the caller, by RPC.
 *
 * Storage (the synchronous key-value API): `generation` {value, expires}, the provider's
 * generation (random, as in Redis); `answer:<digest>` {text, storedAt, expires}, one answer under
 * the HMAC digest of its identity. Both name when they lapse, so the object's alarm deletes them
 * (lapsesAt in state-object.ts) and sets itself again for what is left.
 *
 * Invariants:
 * - Every stored answer belongs to the current generation: a refresh deletes them all in the call
 *   that replaces it, and the generation lapses no earlier than the last answer stored under it.
 * - An answer is stored only if the generation is still the one its lookup read.
 * - A step reads, decides and writes with no await in between; only the alarm is set after.
 * - At most MAX_CACHE_OBJECT_BYTES and MAX_CACHE_OBJECT_ENTRIES: the answer stored longest ago is
 *   deleted first, and answers that lapsed before it. A read writes nothing.
 */
import {
  CACHE_GENERATION_TTL_MS,
  MAX_CACHE_OBJECT_BYTES,
  MAX_CACHE_OBJECT_ENTRIES,
} from "../protocol/state-limits.ts";
import { hex } from "../io/digests.ts";

/** One call to a provider's cache object; a lookup with digest "" reads the generation alone. */
export type CacheAsk =
  | { op: "lookup"; digest: string }
  | { op: "store"; generation: string; digest: string; text: string; ttlMs: number }
  | { op: "refresh" };

/** The generation after the step, and the answer a lookup found. */
export type CacheReply = { generation: string; found: { text: string; ageMs: number } | null };

/** The object's storage, as far as the cache uses it (cloudflare-workers.d.ts types it in full). */
export interface CacheStorage {
  readonly kv: {
    get<T = unknown>(key: string): T | undefined;
    put(key: string, value: unknown): void;
    delete(key: string): boolean;
    list<T = unknown>(options: { prefix: string }): Iterable<[string, T]>;
  };
  getAlarm(): Promise<number | null>;
  setAlarm(at: number): Promise<void>;
  deleteAll(): Promise<void>;
}

type Generation = { value: string; expires: number };
type Stored = { text: string; storedAt: number; expires: number };
/** The object's answers in the order they were stored, with their sizes: rebuilt when it wakes. */
type Index = { entries: Map<string, { bytes: number; expires: number }>; bytes: number };

const GENERATION = "generation";
const ANSWER = "answer:";

/** Each live object's index, by its state: an object evicted from memory rebuilds its own. */
const indexes = new WeakMap<object, Index>();

export async function cacheStep(
  ctx: { readonly storage: CacheStorage },
  ask: CacheAsk,
): Promise<CacheReply> {
  const { storage } = ctx;
  const now = Date.now();
  if (ask.op === "refresh") {
    // The object is this provider's cache alone: every answer in it goes with its generation.
    indexes.delete(ctx);
    await storage.deleteAll();
  }
  const current = storage.kv.get<Generation>(GENERATION);
  let generation = current !== undefined && now < current.expires ? current.value : null;
  let sweepAt = Infinity;
  if (generation === null) {
    generation = hex(crypto.getRandomValues(new Uint8Array(16)));
    storage.kv.put(GENERATION, { value: generation, expires: now + CACHE_GENERATION_TTL_MS });
    sweepAt = now + CACHE_GENERATION_TTL_MS;
  }
  let found: CacheReply["found"] = null;
  if (ask.op === "lookup" && ask.digest !== "") {
    // A lapsed answer is left for the alarm: a lookup writes nothing.
    const stored = storage.kv.get<Stored>(ANSWER + ask.digest);
    if (stored !== undefined && now < stored.expires) {
      found = { text: stored.text, ageMs: Math.max(0, now - stored.storedAt) };
    }
  }
  if (ask.op === "store" && ask.generation === generation) {
    sweepAt = Math.min(sweepAt, store(ctx, ask, now));
  }
  if (sweepAt !== Infinity) {
    // Moved earlier, never later: the alarm deletes what lapsed, then sets itself for the rest.
    const alarm = await storage.getAlarm();
    if (alarm === null || alarm > sweepAt) await storage.setAlarm(sweepAt);
  }
  return { generation, found };
}

/** Stores one answer and evicts past the bounds; answers when the stored answer lapses. */
function store(
  ctx: { readonly storage: CacheStorage },
  ask: Extract<CacheAsk, { op: "store" }>,
  now: number,
): number {
  const { kv } = ctx.storage;
  const index = indexOf(ctx);
  const bytes = sizeOf(ask.digest, ask.text);
  drop(kv, index, ask.digest);
  if (bytes > MAX_CACHE_OBJECT_BYTES) return Infinity;
  const expires = now + Math.max(1, ask.ttlMs);
  kv.put(ANSWER + ask.digest, { text: ask.text, storedAt: now, expires } satisfies Stored);
  index.entries.set(ask.digest, { bytes, expires });
  index.bytes += bytes;
  // Oldest first: answers that lapsed (or that the alarm already deleted), then any past a bound.
  for (const [digest, entry] of index.entries) {
    const over = index.bytes > MAX_CACHE_OBJECT_BYTES ||
      index.entries.size > MAX_CACHE_OBJECT_ENTRIES;
    if (!over && now < entry.expires) break;
    drop(kv, index, digest);
  }
  // The generation must outlive every answer under it, else a lookup would replace it early.
  const generation = kv.get<Generation>(GENERATION) as Generation;
  if (generation.expires < expires) {
    kv.put(GENERATION, { ...generation, expires: now + CACHE_GENERATION_TTL_MS });
  }
  return expires;
}

function indexOf(ctx: { readonly storage: CacheStorage }): Index {
  let index = indexes.get(ctx);
  if (index !== undefined) return index;
  const stored = [...ctx.storage.kv.list<Stored>({ prefix: ANSWER })]
    .sort(([, a], [, b]) => a.storedAt - b.storedAt);
  index = { entries: new Map(), bytes: 0 };
  for (const [key, { text, expires }] of stored) {
    const digest = key.slice(ANSWER.length);
    const bytes = sizeOf(digest, text);
    index.entries.set(digest, { bytes, expires });
    index.bytes += bytes;
  }
  indexes.set(ctx, index);
  return index;
}

function drop(kv: CacheStorage["kv"], index: Index, digest: string): void {
  const entry = index.entries.get(digest);
  if (entry === undefined) return;
  kv.delete(ANSWER + digest);
  index.entries.delete(digest);
  index.bytes -= entry.bytes;
}

/** An answer's stored size: its JSON's UTF-8 bytes and its key's. */
function sizeOf(digest: string, text: string): number {
  return ANSWER.length + digest.length + new TextEncoder().encode(text).byteLength;
}
