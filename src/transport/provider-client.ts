/**
 * The one interface every transport implements: a built-in in process and a remote provider over
 * HTTP are called the same way and answer the same way.
 */
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

/**
 * The author contract lives with the protocol; these names stay importable from here only for the
 * modules that have not moved to src/protocol/provider-contract.ts yet.
 */
export {
  ProviderError,
  type SearchAdapter,
  type SearchAnswer,
} from "../protocol/provider-contract.ts";
