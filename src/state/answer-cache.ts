/**
 * The provider-answer cache (docs/envelope.md, "Cached answers"): one port, AnswerCache, with the
 * memory adapter here (an LRU bounded in bytes), the Redis one in redis-cache.ts and the Durable
 * Objects one (Workers) in durable-cache.ts. What goes in
 * and under which identity is src/gateway's (answer-cache-hook.ts); a cache keeps JSON text.
 *
 * Invariants:
 * - Every entry is stored under its provider's generation; `invalidate` replaces the generation,
 *   so a refresh drops a provider's answers without deleting anything by prefix.
 * - An answer is stored only under the generation read before its provider was asked: one that
 *   started before a refresh never lands under the generation the refresh made.
 * - A store keeps only what may leave the instance; which answers those are is the gateway's one
 *   rule (src/gateway/answer-places.ts): the others stay in the instance's memory, under the
 *   generation the store gives.
 * - No operation throws: a store that fails reads as a miss and stores nothing.
 */
import { LRUCache } from "lru-cache";

/** What a lookup found: the provider's generation now, and the answer if one is fresh. */
export type CacheLookup = {
  /** Pass it back to `store`: the answer is kept only while this is still the generation. */
  generation: string | null;
  /** The stored JSON text and how long ago it was stored; null: a miss. */
  found: { text: string; ageMs: number } | null;
};

export interface AnswerCache {
  /**
   * The provider's generation and the answer stored under `identity` (the canonical JSON of what
   * decides the answer, hashed before it is a key); null: the generation alone. `budgetMs`:
   * what is left of the search that asks; a store is waited for no longer.
   */
  lookup(provider: string, identity: string | null, budgetMs?: number): Promise<CacheLookup>;
  /** Keeps `text` for `ttlMs` unless the provider's generation is no longer `generation`. */
  store(
    provider: string,
    identity: string,
    lookup: CacheLookup,
    text: string,
    ttlMs: number,
  ): Promise<void>;
  /**
   * A new generation for `provider`: every answer stored before it is unreachable. False when the
   * store could not be told, and answers stored before may still be served until their TTL.
   */
  invalidate(provider: string): Promise<boolean>;
}

/**
 * How a store-backed cache runs each call: under the gateway instance's one StoreGuard
 * (store-guard.ts), shared with the state when there is one, within the store's timeout and what
 * is left of the search (`budgetMs`); null when it failed, was late, or the store is left alone.
 */
export interface StoreCalls {
  run<T>(call: () => Promise<T>, budgetMs?: number): Promise<T | null>;
}

type Entry = { text: string; storedAt: number };

/**
 * Answers kept in this instance's memory, bounded by their bytes (text and key, as UTF-16 counts
 * them in memory) and each by its TTL, over lru-cache: the one used longest ago goes first.
 */
export class AnswerLru {
  readonly #entries: LRUCache<string, Entry>;

  constructor(maxBytes: number, private readonly now: () => number) {
    this.#entries = new LRUCache<string, Entry>({
      maxSize: maxBytes,
      sizeCalculation: (entry, key) => 2 * (key.length + entry.text.length),
      // Expiry read at the gateway's own clock, on every read.
      perf: { now },
      ttlResolution: 0,
    });
  }

  get bytes(): number {
    return this.#entries.calculatedSize;
  }

  get(key: string): { text: string; ageMs: number } | null {
    const entry = this.#entries.get(key);
    if (entry === undefined) return null;
    return { text: entry.text, ageMs: Math.max(0, this.now() - entry.storedAt) };
  }

  set(key: string, text: string, ttlMs: number): void {
    // An entry over the whole bound is not kept (lru-cache refuses it), and an older one goes.
    this.#entries.delete(key);
    this.#entries.set(key, { text, storedAt: this.now() }, { ttl: Math.max(1, ttlMs) });
  }
}

/** Each instance alone: answers and generations in its own memory. */
export class MemoryAnswerCache implements AnswerCache {
  readonly #lru: AnswerLru;
  readonly #generations = new Map<string, number>();

  constructor(maxBytes: number, now: () => number) {
    this.#lru = new AnswerLru(maxBytes, now);
  }

  /** Bytes held, for tests of the bound. */
  get bytes(): number {
    return this.#lru.bytes;
  }

  lookup(provider: string, identity: string | null): Promise<CacheLookup> {
    const generation = String(this.#generations.get(provider) ?? 0);
    if (identity === null) return Promise.resolve({ generation, found: null });
    // In process the identity itself is the key: it never leaves, and a digest costs each lookup.
    const key = `${provider}:${generation}:${identity}`;
    return Promise.resolve({ generation, found: this.#lru.get(key) });
  }

  store(
    provider: string,
    identity: string,
    lookup: CacheLookup,
    text: string,
    ttlMs: number,
  ): Promise<void> {
    const generation = String(this.#generations.get(provider) ?? 0);
    if (lookup.generation === generation) {
      this.#lru.set(`${provider}:${generation}:${identity}`, text, ttlMs);
    }
    return Promise.resolve();
  }

  invalidate(provider: string): Promise<boolean> {
    this.#generations.set(provider, (this.#generations.get(provider) ?? 0) + 1);
    return Promise.resolve(true);
  }
}
