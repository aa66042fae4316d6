/**
 * Where a cached answer may live (docs/envelope.md, "Cached answers"; docs/security.md, "Shared
 * state"): the one rule, over whichever store the runtime gave (memory, Redis, Durable Objects).
 *
 * Invariants:
 * - An answer that is not shared (a provider that is not public or receives gateway tokens) never
 *   reaches a store: it stays in this instance's LRU, under the generation read from the store, so
 *   a refresh on any instance drops it too; the store is asked for the generation alone.
 * - A shared answer is the store's to keep; this instance keeps no copy of it.
 * - No operation throws: a store that fails reads as a miss and stores nothing.
 */
import { type AnswerCache, AnswerLru, type CacheLookup } from "../state/answer-cache.ts";

export class PlacedAnswers {
  /** Answers that may not leave this instance, keyed by provider, generation and identity. */
  readonly #local: AnswerLru;

  constructor(
    private readonly store: AnswerCache,
    /** TRACEFETCH_CACHE_MAX_BYTES: this instance's LRU of answers that are not shared. */
    maxBytes: number,
    now: () => number,
  ) {
    this.#local = new AnswerLru(maxBytes, now);
  }

  /**
   * `identity`: the canonical JSON of what decides the answer; `shared`: whether it may leave;
   * `budgetMs`: what is left of the search that asks.
   */
  async lookup(
    provider: string,
    identity: string,
    shared: boolean,
    budgetMs?: number,
  ): Promise<CacheLookup> {
    if (shared) return await this.store.lookup(provider, identity, budgetMs);
    const { generation } = await this.store.lookup(provider, null, budgetMs);
    if (generation === null) return { generation, found: null };
    // In process the identity itself is the key: it never leaves.
    return { generation, found: this.#local.get(`${provider}:${generation}:${identity}`) };
  }

  /** Keeps `text` for `ttlMs` unless the provider's generation is no longer the lookup's. */
  async keep(
    provider: string,
    identity: string,
    lookup: CacheLookup,
    text: string,
    ttlMs: number,
    shared: boolean,
  ): Promise<void> {
    const { generation } = lookup;
    if (generation === null) return;
    if (shared) return await this.store.store(provider, identity, lookup, text, ttlMs);
    // Kept only if no refresh replaced the generation since the lookup.
    if ((await this.store.lookup(provider, null)).generation !== generation) return;
    this.#local.set(`${provider}:${generation}:${identity}`, text, ttlMs);
  }

  /** A new generation for `provider`; false when the store could not be told. */
  invalidate(provider: string): Promise<boolean> {
    return this.store.invalidate(provider);
  }
}
