/**
 * What the gateway tells the operator's dashboards and traces (docs/deploy.md, "Observing it"):
 * the ports a metrics registry and a tracer implement, so the core and the gateway report events
 * without knowing Prometheus or OpenTelemetry. The adapters are src/observe's, picked by a root.
 *
 * Invariants:
 * - An event names a provider, an outcome, a code, a route pattern or a method: never a query, a
 *   locator, a URL path, a caller or a token.
 * - Nothing here may throw into a search, or make one wait: recording is synchronous and cheap,
 *   exporting is the adapter's background work.
 */

/** How one provider attempt ended, as metrics and a client span report it. */
export type AttemptSeen = {
  provider: string;
  outcome: string;
  code: string;
  latencyMs: number;
  costMicros: number;
  /** Answered from the answer cache: no provider was contacted. */
  cached: boolean;
  /** Decoded bytes the attempt read from its provider. */
  bytes: number;
};

/**
 * How one page fetch ended (`/v1/fetch`, the MCP `fetch` tool; a crawl's pages too, when it counts
 * them): `fetched` from the page, `cached` from the answer cache, `refused` by the fetch policy or
 * robots.txt, `failed` on the way (docs/envelope.md, "Fetching a page").
 */
export type FetchSeen = {
  outcome: "fetched" | "cached" | "refused" | "failed";
  /** The envelope's code. */
  code: string;
  seconds: number;
  /** Decoded bytes read from the page; 0 unless fetched. */
  bytes: number;
};

/** What an answer cache lookup found: `bypass` when this attempt's answer may not be cached. */
export type CacheResult = "hit" | "miss" | "bypass";

/** Values read when metrics are collected, not counted as they happen. */
export type GaugeSources = {
  searchesInFlight: () => number;
  /** Each provider by name, and whether it is suspended now (docs/protocol.md, "Suspension"). */
  suspended: () => Promise<ReadonlyMap<string, boolean>>;
  /** Times the shared state fell back to this instance's memory (docs/deploy.md). */
  sharedStateFallbacks: () => number;
};

/** The metrics port: counters and histograms of one instance, exposed as Prometheus text. */
export interface MetricsPort {
  /** Whether `GET /metrics` serves them (Node, Deno); false where they are pushed (Workers). */
  readonly scraped: boolean;
  /** A search answered with `code` (an admission refusal included) after `seconds`. */
  searched(code: string, seconds: number): void;
  attempted(seen: AttemptSeen): void;
  cacheLookup(provider: string, result: CacheResult): void;
  /** A page fetch answered (admitted: a refusal at admission is a caller refusal or overload). */
  fetched(seen: FetchSeen): void;
  /** A verify answered with this verdict. */
  verified(verdict: string): void;
  /** A caller refused for who it is or what it may do (a token, a scope, its limits). */
  refused(code: string): void;
  /**
   * A crawl that ran (`POST /v1/crawl`): how it ended (its `done` event's `ended`, or `cancelled`
   * when its caller left), and the pages it answered.
   */
  crawled(ended: string, pages: number): void;
  /** An HTTP request answered; `route` is the route's pattern, never the request's path. */
  served(route: string, method: string, status: number, seconds: number): void;
  /** Reads these values at each collection. */
  watch(sources: GaugeSources): void;
  /** The Prometheus text exposition of every metric, and its media type. */
  exposition(): Promise<{ contentType: string; text: string }>;
}

/** A provider attempt's client span: the traceparent its request carries names it. */
export interface AttemptSpan {
  readonly traceparent: string;
  /** The provider's HTTP response status, told when its headers arrive (a ResponseWatch). */
  responded(status: number): void;
  end(seen: AttemptSeen): void;
}

/** How any other client span ended (a page fetch). */
export type ClientSpanEnd = {
  /** Attributes learnt by the end; the same rules as every label: no locator, path or query. */
  attributes?: Record<string, string | number | boolean>;
  /** Set when it failed: `error.type`, and the span's status becomes an error. */
  error?: string | undefined;
};

/** A client span of the request's other than a provider attempt (a page fetch). */
export interface ClientSpan {
  readonly traceparent: string;
  /** The HTTP response status, told when the headers arrive. */
  responded(status: number): void;
  end(seen: ClientSpanEnd): void;
}

/** One request's trace, as the search run and the fan-out see it. */
export interface RequestTrace {
  /** A child span for one provider attempt (or a cached answer in its place). */
  attempt(provider: string, kind: "search" | "expand"): AttemptSpan;
  /** A child client span named `name` (e.g. `fetch {host}`), with attributes known at its start. */
  client(name: string, attributes: Record<string, string | number | boolean>): ClientSpan;
  /** The search's query, which the span keeps only with TRACEFETCH_TRACE_RAW_QUERIES. */
  query(text: string): void;
}

/** The server span of one request. */
export interface ServerSpan {
  readonly trace: RequestTrace;
  /** Names the span after what the request turned out to be (an MCP tool call). */
  rename(name: string, attributes: Record<string, string>): void;
  end(status: number): void;
}

/** The tracing port: a server span per request, continuing the caller's `traceparent`. */
export interface TracingPort {
  serve(request: { method: string; route: string; headers: Headers }): ServerSpan;
  /** Spans waiting for export, and spans dropped because the queue was full. */
  status(): { queued: number; dropped: number; exported: number; failed: number };
  /** Exports what is queued (on Workers inside `waitUntil`); never rejects. */
  flush(): Promise<void>;
}

/** The telemetry a gateway was given; either part may be off. */
export type Telemetry = { metrics: MetricsPort | null; tracing: TracingPort | null };

export const NO_TELEMETRY: Telemetry = { metrics: null, tracing: null };

/** The codes that refuse a request for its caller (`tracefetch_caller_refusals_total`). */
export const CALLER_REFUSAL_CODES: ReadonlySet<string> = new Set([
  "unauthorized",
  "token_invalid",
  "token_expired",
  "forbidden",
  "insufficient_scope",
  "rate_limited",
]);
