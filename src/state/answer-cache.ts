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
import { STORE_RETRY_MS } from "../protocol/state-limits.ts";

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
   * decides the answer, hashed before it is a key); null: the generation alone.
   */
  lookup(provider: string, identity: string | null): Promise<CacheLookup>;
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

/** A call that failed or timed out. */
const FAILED = Symbol("failed");

/**
 * How a store-backed cache runs each call: within the timeout, null when it failed or was late,
 * and the store then left alone for STORE_RETRY_MS. The shared state's guard (GuardedState) is one:
 * given it, the cache's calls share the state's timeout, back-off, fallback count and
 * `shared_state` entry in `/v1/status`; CacheCalls is the cache's own, for a cache with no state.
 */
export interface StoreCalls {
  run<T>(call: () => Promise<T>): Promise<T | null>;
}

/** A cache's own StoreCalls, for a cache in Redis with no shared state beside it. */
export class CacheCalls implements StoreCalls {
  #downUntil = 0;

  constructor(private readonly timeoutMs: number, private readonly now: () => number) {}

  /** The call's answer; null when it failed, timed out, or the store is left alone. */
  async run<T>(call: () => Promise<T>): Promise<T | null> {
    if (this.now() < this.#downUntil) return null;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<typeof FAILED>((resolve) => {
      timer = setTimeout(() => resolve(FAILED), this.timeoutMs);
    });
    try {
      const reply = await Promise.race([call().catch((): typeof FAILED => FAILED), late]);
      if (reply !== FAILED) return reply;
      this.#downUntil = this.now() + STORE_RETRY_MS;
      return null;
    } finally {
      clearTimeout(timer);
    }
  }
}

type Entry = { text: string; storedAt: number; expires: number; bytes: number };

/**
 * Entries in least-recently-used order, bounded by their bytes (text and key, as UTF-16 counts
 * them in memory): the one used longest ago goes first.
 */
export class AnswerLru {
  readonly #entries = new Map<string, Entry>();
  #bytes = 0;

  constructor(private readonly maxBytes: number, private readonly now: () => number) {}

  get bytes(): number {
    return this.#bytes;
  }

  get(key: string): { text: string; ageMs: number } | null {
    const entry = this.#entries.get(key);
    if (entry === undefined) return null;
    const now = this.now();
    if (now >= entry.expires) {
      this.#drop(key, entry);
      return null;
    }
    // Moved to the end: the most recently used.
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return { text: entry.text, ageMs: Math.max(0, now - entry.storedAt) };
  }

  set(key: string, text: string, ttlMs: number): void {
    const bytes = 2 * (key.length + text.length);
    const old = this.#entries.get(key);
    if (old !== undefined) this.#drop(key, old);
    if (bytes > this.maxBytes) return;
    const now = this.now();
    this.#entries.set(key, { text, storedAt: now, expires: now + ttlMs, bytes });
    this.#bytes += bytes;
    for (const [oldest, entry] of this.#entries) {
      if (this.#bytes <= this.maxBytes) break;
      this.#drop(oldest, entry);
    }
  }

  #drop(key: string, entry: Entry): void {
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
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
