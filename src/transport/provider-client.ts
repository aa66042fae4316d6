/**
 * The one interface every transport implements: a built-in in process and a remote provider over
 * HTTP are called the same way and answer the same way.
 */
import type { ProviderErrorCode } from "../protocol/codes.ts";
import type { WireCandidate } from "../protocol/provider-wire.ts";
import type { ByteBudget } from "./byte-budget.ts";
import type { Failure } from "./classify.ts";
import type { Semaphore } from "./semaphore.ts";

/** One call of one provider for one search. */
export type ProviderCall = {
  query: string;
  limit: number;
  requestId: string;
  /** W3C trace context for this attempt. */
  traceparent: string;
  /** Fires on the attempt's deadline (reason: AttemptAbort "timeout") or the caller's departure. */
  signal: AbortSignal;
  /** The search's remaining decoded-byte budget, shared by its attempts. */
  budget: ByteBudget;
  /**
   * Bounds the connections of one search that wait for headers at once (Workers allow six); an
   * HTTP client holds a place from the request until its headers arrive. Null: no bound.
   */
  connectGate: Semaphore | null;
  /** Headers for this call only, e.g. a provider token minted for this attempt. */
  headers?: Record<string, string>;
};

/** An answer that passed the protocol checks; the core still sanitises every candidate. */
export type Answer = {
  kind: "answer";
  candidates: WireCandidate[];
  warnings: string[];
  /** What this call cost when the provider reports it (Exa does); else the manifest's cost_micros. */
  cost_micros?: number;
};

export type TransportResult = Answer | ({ kind: "failure" } & Failure);

export interface ProviderClient {
  call(call: ProviderCall): Promise<TransportResult>;
}

/** What an adapter answers: candidates (possibly none: an honest empty) and optional warnings. */
export type SearchAnswer = {
  candidates: WireCandidate[];
  warnings?: string[];
  cost_micros?: number;
};

/**
 * What a provider author implements once; it runs in process as a built-in and over HTTP through
 * serveProvider. Throwing means the search failed (throw a ProviderError to say how); an empty list
 * means an honest empty.
 */
export interface SearchAdapter {
  readonly name: string;
  readonly scope: string;
  search(request: { query: string; limit: number }, signal: AbortSignal): Promise<SearchAnswer>;
}

/**
 * Thrown by an adapter to fail with a code of the provider protocol (design 3.2), e.g. a rate
 * limit with its wait; any other error is `search_failed`.
 */
export class ProviderError extends Error {
  override name = "ProviderError";
  constructor(
    readonly code: ProviderErrorCode,
    message: string,
    readonly retryAfterMs?: number,
    /** Overrides the code's usual retryability, e.g. false for a rejected key. */
    readonly retryable?: boolean,
  ) {
    super(message);
  }
}
