/**
 * What a provider author implements: one SearchAdapter, run in process as a built-in or served
 * over HTTP by serveProvider, and ProviderError to fail with a code of the provider protocol
 * (docs/protocol.md, "Failing honestly").
 */
import type { HealthCoverage, HealthStatus, ProviderErrorCode } from "./codes.ts";
import type { WireCandidate } from "./provider-wire.ts";
import type { SearchFilters } from "./search-filters.ts";
import type { CollectionStats } from "./collection-stats.ts";

/** What an adapter answers: candidates (possibly none: an honest empty) and optional warnings. */
export type SearchAnswer = {
  candidates: WireCandidate[];
  warnings?: string[];
  /** What this call cost when the provider knows it; else the manifest's cost_micros. */
  cost_micros?: number;
};

/** What `describe` says beyond the name and scope (docs/protocol.md, "describe"). */
export type ProviderDescription = {
  /** The actions it answers; `search` and `describe` always. */
  actions: string[];
  /** The search filters it honours, e.g. "domains", "published_after", "published_before". */
  filters: string[];
  /** The protocol majors it speaks. */
  protocol_versions: number[];
};

/** What `health` (and `refresh`) answer (docs/protocol.md, "health"). */
export type HealthAnswer = {
  status: HealthStatus;
  coverage: HealthCoverage;
  /** How fresh its data is, RFC 3339; null when it cannot say. */
  watermark: string | null;
  document_count?: number;
  /** Short lines for an operator; bounded and redacted before anyone sees them. */
  diagnostics?: string[];
};

/** What `expand` is asked: a locator this provider issued, and the revision the caller saw. */
export type ExpandRequest = { locator: string; revision?: string };

/** The evidence behind a locator (docs/protocol.md, "expand"). */
export type Evidence = {
  title: string;
  /** The text; cut at MAX_EXPAND_TEXT_CHARS with the truncation marker when longer. */
  text: string;
  /** What the text is, e.g. "text/markdown", "text/plain". */
  content_type: string;
  /** When the provider read the source, RFC 3339. */
  retrieved_at: string;
  /** Changes whenever the source does; a caller passes it back to ask for this very version. */
  revision?: string;
  /** True when the provider itself cut the text. */
  truncated?: boolean;
};

/**
 * What a provider author implements once. Throwing means the search failed (throw a ProviderError
 * to say how); an empty list means an honest empty. The other actions are optional: `describe`
 * is answered from the adapter (its name, scope, the actions it implements and `filters`) unless it
 * implements its own, and an action it does not implement is refused as `unsupported_action`.
 */
export interface SearchAdapter {
  readonly name: string;
  readonly scope: string;
  /** The search filters it honours, listed by `describe`. */
  readonly filters?: readonly string[];
  /**
   * `filters` holds only filters it listed in `filters`, and is absent when none of those is in
   * use; `collection_stats`, only for an adapter that implements `stats`, are its score group's
   * sums, to score with in place of its own.
   */
  search(
    request: {
      query: string;
      limit: number;
      filters?: SearchFilters;
      collection_stats?: CollectionStats;
    },
    signal: AbortSignal,
  ): Promise<SearchAnswer>;
  describe?(signal: AbortSignal): Promise<ProviderDescription>;
  health?(signal: AbortSignal): Promise<HealthAnswer>;
  /** Throw ProviderError `locator_unknown` or `locator_expired`; never answer an empty text instead. */
  expand?(request: ExpandRequest, signal: AbortSignal): Promise<Evidence>;
  /** Brings an index up to date, then answers its health. */
  refresh?(signal: AbortSignal): Promise<HealthAnswer>;
  /**
   * What its collection holds for the terms `query` reaches, as its search would count them: the
   * gateway sums the answers of a score group's members and sends the sums with the search.
   */
  stats?(request: { query: string }, signal: AbortSignal): Promise<CollectionStats>;
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
