/**
 * What a provider author implements: one SearchAdapter, run in process as a built-in or served
 * over HTTP by serveProvider, and ProviderError to fail with a code of the provider protocol
 * (docs/protocol.md, "Failing honestly").
 */
import type { ProviderErrorCode } from "./codes.ts";
import type { WireCandidate } from "./provider-wire.ts";

/** What an adapter answers: candidates (possibly none: an honest empty) and optional warnings. */
export type SearchAnswer = {
  candidates: WireCandidate[];
  warnings?: string[];
  /** What this call cost when the provider knows it; else the manifest's cost_micros. */
  cost_micros?: number;
};

/**
 * What a provider author implements once. Throwing means the search failed (throw a ProviderError
 * to say how); an empty list means an honest empty.
 */
export interface SearchAdapter {
  readonly name: string;
  readonly scope: string;
  search(request: { query: string; limit: number }, signal: AbortSignal): Promise<SearchAnswer>;
}

export type ProviderErrorOptions = {
  /**
   * False when trying again cannot help (a rejected key, an answer that would come back the same).
   * Only false has an effect: a provider cannot make a code that is never retried retryable.
   */
  retryable?: boolean | undefined;
  /** How long the caller should wait before trying again, in milliseconds. */
  retryAfterMs?: number | undefined;
};

/**
 * Thrown by an adapter to fail with a code of the provider protocol, e.g. a rate limit with its
 * wait; any other error is `search_failed`.
 */
export class ProviderError extends Error {
  override name = "ProviderError";
  readonly retryable: boolean | undefined;
  readonly retryAfterMs: number | undefined;
  constructor(
    readonly code: ProviderErrorCode,
    message: string,
    options: ProviderErrorOptions = {},
  ) {
    super(message);
    this.retryable = options.retryable;
    this.retryAfterMs = options.retryAfterMs;
  }
}
