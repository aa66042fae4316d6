/**
 * Runs the planned attempts concurrently, each under its own deadline, and records each outcome.
 * Records are returned in plan order whatever order the providers finished in.
 */
import type { EvidenceState } from "../protocol/codes.ts";
import type { AttemptRecord } from "../protocol/envelope-schema.ts";
import { FUSION_RESERVE_MS } from "../protocol/limits.ts";
import { PLACE_HELD_AFTER_ABORT_MS } from "../protocol/admission-limits.ts";
import type { ProviderSpec } from "../protocol/manifest-schema.ts";
import type { SearchRequest } from "../protocol/search-request.ts";
import { type ByteBudget, CountedBudget } from "../io/byte-budget.ts";
import { classifyThrown } from "../transport/classify-thrown.ts";
import { protocolError } from "../transport/failure.ts";
import type { ProviderClient, TransportResult } from "../transport/provider-client.ts";
import type { FilterName, SearchFilters } from "../protocol/search-filters.ts";
import { filtersFor } from "./filters.ts";
import { attemptRecord } from "./attempt-record.ts";
import { traceContexts } from "./trace-context.ts";
import { type Gate, type Release, Semaphore } from "../io/gate.ts";
import type { AttemptWatch } from "./suspension.ts";
import { QueueWatch } from "./queue-watch.ts";
import { Deadlines } from "./deadlines.ts";
import type { StatsRound } from "./score-group-stats.ts";
import { statsRounds } from "./score-groups.ts";
import type { AnswerCacheHook, CacheTicket } from "./cached-attempt.ts";
import type { AttemptSpan, MetricsPort, RequestTrace } from "./telemetry.ts";

/** What contacting providers needs from the gateway: the same for every search of one caller. */
export type AttemptDeps = {
  now: () => number;
  clientFor: (spec: ProviderSpec) => ProviderClient;
  gateFor: (spec: ProviderSpec) => Gate;
  /** Connections one search may have waiting for headers at once (Workers: 6), or null for no bound. */
  maxPendingConnections: number | null;
  /** Per-attempt headers (a provider token minted for `budgetMs`), or null for none. */
  headersFor: ((spec: ProviderSpec, budgetMs: number) => Promise<Record<string, string>>) | null;
  /**
   * The filters a provider declared it honours (its `describe`); only those reach its request
   * (docs/protocol.md, "Filters"). Absent: no provider receives any.
   */
  acceptsFilters?: ((spec: ProviderSpec) => readonly FilterName[]) | undefined;
  /**
   * Whether a provider's `describe` lists `stats`: members of one score group that do are asked
   * first, and search with the group's sums (score-group-stats.ts). Absent: no one is asked.
   */
  declaresStats?: ((spec: ProviderSpec) => boolean) | undefined;
  /** Counts each attempt (docs/deploy.md, "Observing it"); absent or null: nothing is counted. */
  metrics?: MetricsPort | null | undefined;
};

/** One search's attempts. */
export type FanOut = {
  run: readonly ProviderSpec[];
  request: Pick<SearchRequest, "query" | "limit" | "timeout_ms" | "filters">;
  requestId: string;
  /** Fires when the caller goes away. */
  signal: AbortSignal;
  deps: AttemptDeps;
  /** When the search started (by `deps.now`): the caller's deadline counts from here. */
  startedAt: number;
  /** The search's decoded-byte budget, shared by its attempts. */
  budget: ByteBudget;
  /** Called as each attempt finishes, in completion order (for streaming). */
  onAttempt?: ((index: number, record: AttemptRecord) => void) | undefined;
  /** Told how each attempt ended, before onAttempt (docs/protocol.md, "Suspension"). */
  suspension?: AttemptWatch | undefined;
  /** Asked before each provider (docs/envelope.md, "Cached answers"); absent: nothing cached. */
  cache?: AnswerCacheHook | undefined;
  /** The request's trace: a client span per attempt, whose traceparent the provider is sent. */
  trace?: RequestTrace | undefined;
};

export function evidenceStateOf(spec: ProviderSpec): EvidenceState {
  if (spec.sensitivity === "internal") return "candidate-only-internal";
  return spec.name === "workspace" && spec.transport === "builtin"
    ? "local-source-match"
    : "candidate-only";
}

export async function fanOut(search: FanOut): Promise<AttemptRecord[]> {
  const { run, signal, deps } = search;
  const traceparents = traceContexts(run.length);
  // One listener on the caller's signal for the whole fan-out, not one per attempt: Node warns
  // (MaxListenersExceededWarning) on every signal that gets more than 10, and a search runs up to 32.
  const deadlines = new Deadlines(signal);
  const rounds = await statsRounds(run, deps.declaresStats, deps.now);
  const shared: Shared = {
    search,
    deadlines,
    // Per search, as the Workers limit is per invocation: the seventh request waits for a place.
    connectGate: deps.maxPendingConnections === null
      ? null
      : new Semaphore(deps.maxPendingConnections),
    // Every attempt starts now, so those of one provider timeout share one deadline.
    started: deps.now(),
    rounds,
  };
  const onCallerGone = () => deadlines.cancel();
  signal.addEventListener("abort", onCallerGone, { once: true });
  try {
    return await Promise.all(run.map(async (spec, index) => {
      const span = search.trace?.attempt(spec.name, "search") ?? null;
      const traceparent = span?.traceparent ?? traceparents[index] as string;
      const record = await attempt(spec, traceparent, shared, span);
      search.onAttempt?.(index, record);
      return record;
    }));
  } finally {
    signal.removeEventListener("abort", onCallerGone);
  }
}

/** What the attempts of one search share. */
type Shared = {
  search: FanOut;
  /** The attempts' deadlines, cancelled together when the caller leaves. */
  deadlines: Deadlines;
  connectGate: Gate | null;
  /** When the attempts started (by `deps.now`). */
  started: number;
  /** The statistics round of each score group member that takes part in one. */
  rounds: ReadonlyMap<string, StatsRound>;
};

async function attempt(
  spec: ProviderSpec,
  traceparent: string,
  { search, deadlines, connectGate, started, rounds }: Shared,
  span: AttemptSpan | null,
): Promise<AttemptRecord> {
  const { deps, request } = search;
  const metrics = deps.metrics ?? null;
  // A score group's member is sent the group's statistics, which no cached answer reflects.
  const ticket = rounds.has(spec.name) ? null : search.cache?.open(spec) ?? null;
  const cached = ticket === null ? null : await ticket.hit;
  if (search.cache !== undefined) metrics?.cacheLookup(spec.name, lookupOf(ticket, cached));
  // Answered from the cache: no provider was contacted, so no breaker hears of it.
  if (cached !== null) {
    if (metrics !== null || span !== null) observed(metrics, span, cached, true, 0);
    return cached;
  }
  const callerLeft = request.timeout_ms - FUSION_RESERVE_MS - (started - search.startedAt);
  const providerMs = spec.timeout_seconds * 1000;
  const budget = providerMs <= callerLeft ? "provider_timeout" : "caller_deadline";
  const budgetMs = Math.max(0, Math.min(providerMs, callerLeft));
  const deadline = deadlines.take(budget, budgetMs);
  const signal = deadline.signal;
  let result: TransportResult;
  let release: Release | null = null;
  // Whether the attempt got past our own queues: a failure before that is never the provider's.
  let reached = false;
  // Counted only when someone reads the count: the search's own budget otherwise.
  const counted = metrics === null ? null : new CountedBudget(search.budget);
  const gate = new QueueWatch(deps.gateFor(spec));
  const queue = connectGate === null ? null : new QueueWatch(connectGate);
  try {
    // Time queued behind the provider's concurrency limit counts against this attempt's deadline.
    release = await gate.acquire(signal);
    const headers = deps.headersFor === null ? {} : await deps.headersFor(spec, budgetMs);
    reached = true;
    const client = deps.clientFor(spec);
    const { requestId } = search;
    const bytes = counted ?? search.budget;
    const call = { requestId, traceparent, signal, headers, budget: bytes, connectGate: queue };
    const sums = await rounds.get(spec.name)?.join(
      spec.name,
      budgetMs,
      client,
      request.query,
      call,
    );
    result = await client.call({
      query: request.query,
      limit: request.limit,
      ...sentFilters(spec, request.filters, deps),
      ...(sums === undefined ? {} : { collection_stats: sums }),
      requestId,
      traceparent,
      signal,
      budget: bytes,
      connectGate: queue,
      headers,
      response: span ?? undefined,
    });
  } catch (error) {
    result = { kind: "failure", ...classifyThrown(error, "connect", signal) };
  } finally {
    rounds.get(spec.name)?.withdraw(spec.name);
    // A call its deadline or the caller's departure cut short may still be tearing down its
    // connection: the place waits until the provider can have seen it close, so the provider never
    // has more than its max_concurrency open. The attempt itself does not wait.
    release?.(signal.aborted ? PLACE_HELD_AFTER_ABORT_MS : 0);
    deadlines.release(deadline);
  }
  const latency = Math.round(deps.now() - started);
  let record: AttemptRecord;
  try {
    record = attemptRecord(spec, result, request.limit, latency, request.filters);
  } catch {
    // The attempt's boundary: whatever its answer does to sanitising stays this attempt's failure.
    const broken = protocolError("schema_violation", "the answer could not be sanitised");
    record = attemptRecord(spec, { kind: "failure", ...broken }, request.limit, latency, undefined);
  }
  const settled = search.suspension?.settle(spec, record, {
    reached: reached && !(queue?.lost ?? false),
    waited: gate.waited || (queue?.waited ?? false),
  }) ?? "";
  // A shared store answers later, and only when the attempt could change a breaker.
  const note = typeof settled === "string" ? settled : await settled.catch(() => "");
  if (note !== "") record.message += note;
  ticket?.keep(record);
  if (metrics !== null || span !== null) {
    observed(metrics, span, record, false, counted?.taken ?? 0);
  }
  return record;
}

function lookupOf(ticket: CacheTicket | null, cached: AttemptRecord | null) {
  return ticket === null ? "bypass" : cached === null ? "miss" : "hit";
}

/** Tells the metrics and the attempt's span how it ended. */
function observed(
  metrics: MetricsPort | null,
  span: AttemptSpan | null,
  record: AttemptRecord,
  cached: boolean,
  bytes: number,
): void {
  const seen = {
    provider: record.provider,
    outcome: record.outcome,
    code: record.code,
    latencyMs: record.latency_ms,
    costMicros: record.cost_micros,
    cached,
    bytes,
  };
  metrics?.attempted(seen);
  span?.end(seen);
}

/** The filters a provider receives: none unless it declared some of those in use. */
function sentFilters(
  spec: ProviderSpec,
  filters: SearchFilters | undefined,
  deps: AttemptDeps,
): { filters?: SearchFilters } {
  if (filters === undefined || deps.acceptsFilters === undefined) return {};
  const sent = filtersFor(filters, deps.acceptsFilters(spec));
  return sent === null ? {} : { filters: sent };
}
