/**
 * How the fan-out asks a cache before a provider (docs/envelope.md, "Cached answers"): the core
 * knows only that an attempt may be answered by a record kept earlier, and offers each record it
 * made; what is kept, under which key and for how long is the gateway's (answer-cache-hook.ts).
 */
import type { AttemptRecord } from "../protocol/envelope-schema.ts";
import type { ProviderSpec } from "../protocol/manifest-schema.ts";

/** One search's view of the cache. */
export type AnswerCacheHook = {
  /** The cache's part in one attempt; null: this provider's answers are not cached. */
  open(spec: ProviderSpec): CacheTicket | null;
  /**
   * Starts the lookups of a plan's providers now, beside whatever the search waits for before its
   * fan-out (a shared flight's claim); `open` then finds them under way.
   */
  warm?(run: readonly ProviderSpec[]): void;
  /**
   * Whether the cache answers every attempt of this plan (null: it cannot, whatever it holds): a
   * search it answers whole need not be shared with other instances.
   */
  answersAll?(run: readonly ProviderSpec[]): Promise<boolean> | null;
};

export type CacheTicket = {
  /** The record to answer with (`cached: true`), or null: ask the provider. Never rejects. */
  hit: Promise<AttemptRecord | null>;
  /** Offers the attempt's record once it is final; the hook keeps only what may be kept. */
  keep(record: AttemptRecord): void;
};
