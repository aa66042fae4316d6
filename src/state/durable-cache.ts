/**
 * The Durable Objects adapter of the answer cache (answer-cache.ts), for Workers: one object of the
 * TRACEFETCH_STATE namespace per provider, `cache:<provider>`, keeps that provider's generation and
 * its public answers (cache-object.ts), called by RPC through `answers`. Loaded with DurableStore,
 * by the worker's one dynamic import of the shared state.
 *
 * Invariants:
 * - An identity reaches an object only as HMAC-SHA-256 under TRACEFETCH_STATE_SECRET, in hex.
 * - A lookup costs one call, a store one call; a call that fails or takes longer than
 *   TRACEFETCH_STATE_TIMEOUT_MS reads as a miss and stores nothing, and the objects are then left
 *   alone for STORE_RETRY_MS, so an outage costs a search at most one timeout.
 */
import type { AnswerCache, CacheLookup, StoreCalls } from "./answer-cache.ts";
import { StoreFailure } from "./state-store.ts";
import { type Hmac, keyedHmac } from "../io/digests.ts";
import type { CacheAsk, CacheReply } from "./cache-object.ts";

/** The TRACEFETCH_STATE binding, as far as the cache uses it (StateNamespace in durable-state.ts). */
export interface CacheNamespace {
  idFromName(name: string): unknown;
  get(id: unknown): { answers(ask: CacheAsk): CacheReply | Promise<CacheReply> };
}

export type DurableCacheOptions = {
  /** TRACEFETCH_STATE_SECRET: the HMAC key of answers' digests. */
  secret: string;
  /** The shared state's guard: the cache's calls run under it. */
  calls: StoreCalls;
};

const MISS: CacheLookup = { generation: null, found: null };

export class DurableAnswerCache implements AnswerCache {
  #mac: Hmac | null = null;
  readonly #calls: StoreCalls;

  constructor(
    private readonly namespace: CacheNamespace,
    private readonly options: DurableCacheOptions,
  ) {
    this.#calls = options.calls;
  }

  async lookup(provider: string, identity: string | null, budgetMs?: number): Promise<CacheLookup> {
    const digest = identity === null ? "" : await this.#hmac(identity);
    const reply = await this.#call(provider, { op: "lookup", digest }, budgetMs);
    return reply === null ? MISS : { generation: reply.generation, found: reply.found };
  }

  async store(
    provider: string,
    identity: string,
    lookup: CacheLookup,
    text: string,
    ttlMs: number,
  ): Promise<void> {
    const { generation } = lookup;
    if (generation === null) return;
    const digest = await this.#hmac(identity);
    await this.#call(provider, { op: "store", generation, digest, text, ttlMs: Math.ceil(ttlMs) });
  }

  async invalidate(provider: string): Promise<boolean> {
    return await this.#call(provider, { op: "refresh" }) !== null;
  }

  /** One call within the timeout; null when it failed, timed out, or the objects are left alone. */
  #call(provider: string, ask: CacheAsk, budgetMs?: number): Promise<CacheReply | null> {
    return this.#calls.run(async () => {
      // A fresh stub each call: one an error broke stays broken, and one is cheap to make.
      const stub = this.namespace.get(this.namespace.idFromName(`cache:${provider}`));
      try {
        return await stub.answers(ask);
      } catch {
        // The reason names the operation only: a runtime's message may name the object.
        throw new StoreFailure(`a Durable Object call (answers) failed`);
      }
    }, budgetMs);
  }

  /** An identity's digest: HMAC-SHA-256 under the state's secret, in hex. */
  #hmac(identity: string): string | Promise<string> {
    this.#mac ??= keyedHmac(this.options.secret, "hex");
    return this.#mac("answer", identity);
  }
}
