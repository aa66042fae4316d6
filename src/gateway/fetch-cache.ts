/**
 * Fetched pages in the answer cache (docs/envelope.md, "Fetching a page"): the one place the
 * fetch route reaches the cache port, so that a reshaped port changes this file alone.
 *
 * A fetch's identity is the canonical JSON of its URL and the options that decide its answer
 * (format, max_chars, include_raw); a `query` is not one of them, since the passages it asks for are
 * made from the cached text at answer time, each query its own. It is looked up under the URL asked for, and stored under that
 * one and under the final URL a redirect led to, so a later fetch of either finds it. Pages are
 * shared through the state store only when the manifest's `fetch` block opens no private range:
 * an intranet page stays in the memory of the instance that fetched it.
 */
import type { FetchAsk } from "../protocol/fetch-request.ts";
import { MAX_CACHED_ANSWER_BYTES } from "../protocol/state-limits.ts";
import { type AnswerCache, MemoryAnswerCache } from "../state/answer-cache.ts";
import { PlacedAnswers } from "./answer-places.ts";
import { canonicalJson } from "./search-identity.ts";

/** The cache's namespace for pages: not a provider name a manifest can declare (`:` is refused). */
const PAGES = "tracefetch:fetch";

export type FetchCacheOptions = {
  /** The runtime's cache (Redis, Durable Objects), or null: one in this instance's memory. */
  cache: AnswerCache | null;
  maxBytes: number;
  now: () => number;
  ttlMs: number;
  /** Whether pages may reach a store other instances read. */
  shared: boolean;
};

export type FetchHit = { text: string; ageMs: number };

export class FetchCache {
  readonly #options: FetchCacheOptions;
  /** The one rule of where an answer may live (answer-places.ts), over the runtime's store. */
  readonly #cache: PlacedAnswers;

  constructor(options: FetchCacheOptions) {
    this.#options = options;
    const { maxBytes, now } = options;
    this.#cache = new PlacedAnswers(
      options.cache ?? new MemoryAnswerCache(maxBytes, now),
      maxBytes,
      now,
    );
  }

  /** A stored answer no older than the request accepts; null on a miss or when it asks for 0. */
  async lookup(ask: FetchAsk): Promise<FetchHit | null> {
    const maxAgeMs = ask.max_age_seconds === undefined ? Infinity : ask.max_age_seconds * 1000;
    if (maxAgeMs === 0) return null;
    const { found } = await this.#cache.lookup(
      PAGES,
      identityOf(ask.url, ask),
      this.#options.shared,
    )
      .catch(() => ({ found: null }));
    return found === null || found.ageMs > maxAgeMs ? null : found;
  }

  /** Keeps an answer under the URL asked for and the final URL; anything too large is not kept. */
  async store(ask: FetchAsk, finalUrl: string, text: string): Promise<void> {
    if (new TextEncoder().encode(text).byteLength > MAX_CACHED_ANSWER_BYTES) return;
    const { shared, ttlMs } = this.#options;
    for (const url of new Set([ask.url, finalUrl])) {
      const identity = identityOf(url, ask);
      const lookup = await this.#cache.lookup(PAGES, identity, shared).catch(() => null);
      if (lookup === null) continue;
      await this.#cache.keep(PAGES, identity, lookup, text, ttlMs, shared).catch(() => {});
    }
  }
}

function identityOf(url: string, ask: FetchAsk): string {
  return canonicalJson({
    url,
    format: ask.format,
    max_chars: ask.max_chars,
    include_raw: ask.include_raw,
  });
}
