/**
 * The one interface every transport implements: a built-in in process and a remote provider over
 * HTTP are called the same way and answer the same way.
 */
import type { HealthCoverage, HealthStatus } from "../protocol/codes.ts";
import type { ExpandRequest } from "../protocol/provider-contract.ts";
import type { WireCandidate } from "../protocol/provider-wire.ts";
import type { SearchFilters } from "../protocol/search-filters.ts";
import type { CollectionStats } from "../protocol/collection-stats.ts";
import { ByteBudget } from "../io/byte-budget.ts";
import { MAX_PROVIDER_BODY_BYTES } from "../protocol/limits.ts";
import type { Failure } from "./failure.ts";
import type { Unsupported } from "./classify-status.ts";
import type { Gate } from "../io/gate.ts";

/**
 * The gate a provider call waits at and the release it holds, as this module's calls take them:
 * whoever calls a provider client needs no other vocabulary.
 */
export type { Gate, Release } from "../io/gate.ts";

/** The budget of a search call that belongs to no search (a suspension probe): one answer's cap. */
export function answerBudget(): ByteBudget {
  return new ByteBudget(MAX_PROVIDER_BODY_BYTES);
}

/** Told the HTTP status of a provider's response when its headers arrive (a client span). */
export type ResponseWatch = { responded(status: number): void };

/** One call of one provider for one search. */
export type ProviderCall = {
  query: string;
  limit: number;
  /** Only the filters this provider declared; absent when it declared none of those in use. */
  filters?: SearchFilters;
  /** The score group's summed statistics; only for a provider that declared and answered `stats`. */
  collection_stats?: CollectionStats;
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
  connectGate: Gate | null;
  /** Headers for this call only, e.g. a provider token minted for this attempt. */
  headers?: Record<string, string>;
  /** Told the response's HTTP status, where the transport is HTTP. */
  response?: ResponseWatch | undefined;
};

/** An answer that passed the protocol checks; the core still sanitises every candidate. */
export type Answer = {
  kind: "answer";
  candidates: WireCandidate[];
  warnings: string[];
  /**
   * What this call cost, when a built-in knows it (Exa reports it); else the manifest's
   * cost_micros. Kept in process: it is not part of provider-response.v1, which is strict.
   */
  cost_micros?: number;
};

export type TransportResult = Answer | ({ kind: "failure" } & Failure);

/** One call of an action other than search (docs/protocol.md, "Actions: describe, health, expand, refresh"). */
export type ActionCall = {
  /** The caller's deadline or departure; the caller owns the timer. */
  signal: AbortSignal;
  requestId?: string;
  /** W3C trace context for this call. */
  traceparent?: string;
  /** Headers for this call only, e.g. a provider token minted for it. */
  headers?: Record<string, string>;
  /** Told the response's HTTP status, where the transport is HTTP. */
  response?: ResponseWatch | undefined;
  /**
   * Whether the provider's describe lists this action: false (a search-only provider, or one that
   * left it out) makes a refusal of the request as unknown read as "not supported"; absent when
   * not known.
   */
  declared?: boolean | undefined;
};

/**
 * A `stats` call: part of a search, so its body counts against the search's byte budget and its
 * connection waits for headers under the search's bound, as the search's own attempt does.
 */
export type StatsCall = ActionCall & {
  budget: ByteBudget;
  connectGate: Gate | null;
};

/** A valid stats answer: what the provider's collection holds for the query's terms. */
export type Stats = CollectionStats & { provider: string; scope: string };

/** A valid describe answer. */
export type Description = {
  provider: string;
  scope: string;
  actions: string[];
  filters: string[];
  protocol_versions: number[];
};

/** A valid health (or refresh) answer, its diagnostics redacted and bounded. */
export type Health = {
  provider: string;
  scope: string;
  status: HealthStatus;
  coverage: HealthCoverage;
  watermark: string | null;
  document_count?: number;
  diagnostics: string[];
};

/** A valid expand answer, its text cut at MAX_EXPAND_TEXT_CHARS with the truncation marker. */
export type ExpandedEvidence = {
  provider: string;
  scope: string;
  locator: string;
  title: string;
  text: string;
  content_type: string;
  retrieved_at: string;
  revision?: string;
  /** The provider or the gateway cut the text (it then ends with the truncation marker). */
  truncated: boolean;
};

/**
 * How an action call ended: a valid answer; `unsupported` (the provider does not implement it: a
 * 404 or 501, never an empty success); or a failure classified like a search attempt's (a
 * timeout, a refusal, an error, `locator_unknown`, `locator_expired`, an unusable answer).
 */
export type ActionResult<T> =
  | { kind: "answer"; answer: T }
  | Unsupported
  | ({ kind: "failure" } & Failure);

/**
 * A describe call also ends `invalid` when a complete answer is not a valid describe answer (a
 * redirect, garbage, another schema): the provider is then taken as a search-only v1 provider.
 */
export type DescribeResult = ActionResult<Description> | { kind: "invalid"; message: string };

export interface ProviderClient {
  call(call: ProviderCall): Promise<TransportResult>;
  describe(call: ActionCall): Promise<DescribeResult>;
  health(call: ActionCall): Promise<ActionResult<Health>>;
  expand(request: ExpandRequest, call: ActionCall): Promise<ActionResult<ExpandedEvidence>>;
  refresh(call: ActionCall): Promise<ActionResult<Health>>;
  stats(request: { query: string }, call: StatsCall): Promise<ActionResult<Stats>>;
}
