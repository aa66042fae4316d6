/**
 * One search's trace (docs/security.md, "Search traces"), built from what the search did. Fields
 * are copied by name, never spread, so nothing new in a search result can slip into a trace: no
 * snippet, title, provider message or warning, no token, and the caller's `sub` only as its HMAC.
 */
import { MAX_TRACE_BYTES } from "../../protocol/trace-limits.ts";
import type { SearchRequest } from "../../protocol/search-request.ts";
import type { Trace } from "../../protocol/trace-schema.ts";
import { TRACE_VERSION } from "../../protocol/trace-version.ts";
import type { CompletedSearch } from "../../protocol/envelope-schema.ts";
import type { Caller } from "../../core/caller.ts";
import type { TraceEntry } from "../../protocol/trace-sink.ts";
import type { TraceHasher } from "../../core/trace-hmac.ts";

/** A search that was answered, as the recorder receives it once the answer is on its way. */
export type TraceInput = {
  completed: CompletedSearch;
  request: SearchRequest;
  caller: Caller;
  requestId: string;
  /** When the answer was ready, in ms since the epoch. */
  answeredAt: number;
};

export type TraceOptions = {
  /** Null only when raw queries are opted in and no secret is set. */
  hash: TraceHasher | null;
  rawQueries: boolean;
  rawLocators: boolean;
};

export async function buildTrace(input: TraceInput, options: TraceOptions): Promise<TraceEntry> {
  const { completed, request, caller } = input;
  const { hash } = options;
  const { result } = completed;
  const attempts = result.candidates ?? [];
  const decision = result.decision;
  const query: Trace["query"] = {};
  if (options.rawQueries) query.text = request.query;
  if (hash) query.hmac = await hash("query", request.query);
  const merged: Trace["merged"] = [];
  for (const entry of result.merged ?? []) {
    const found = entry.found_in.map((f) => attempts[f.candidate]);
    const inClear = options.rawLocators || found.some((a) => a?.sensitivity === "public");
    merged.push({
      rank: entry.rank,
      ...(inClear
        ? { locator: entry.locator }
        : hash
        ? { locator_hmac: await hash("locator", entry.locator) }
        : {}),
      found_by: [...entry.found_by],
      ranks: entry.found_in.map((f) => f.citation + 1),
    });
  }
  const trace: Trace = {
    schema_version: TRACE_VERSION,
    request_id: input.requestId,
    time: new Date(input.answeredAt).toISOString(),
    query,
    caller: caller.kind === "token"
      ? {
        authenticated: true,
        ...(hash ? { sub_hmac: await hash("sub", caller.subject) } : {}),
      }
      : { authenticated: false },
    request: {
      scope: request.scope,
      providers: request.providers === null ? null : [...request.providers],
      limit: request.limit,
      tier: request.tier,
      timeout_ms: request.timeout_ms,
      filtered: request.filters !== undefined,
      // Filters say what the caller looked for, as the query does: kept only beside its text.
      ...(options.rawQueries && request.filters ? { filters: request.filters } : {}),
    },
    code: completed.code,
    decision: {
      tier: decision.tier,
      providers: [...decision.providers],
      trimmed: decision.trimmed.map((t) => ({ provider: t.provider, cost_micros: t.cost_micros })),
      skipped: decision.skipped.map((s) => ({ provider: s.provider, reason: s.reason })),
      coalesced: decision.coalesced ?? false,
    },
    attempts: attempts.map((a) => ({
      provider: a.provider,
      sensitivity: a.sensitivity,
      outcome: a.outcome,
      code: a.code,
      latency_ms: a.latency_ms,
      candidate_count: a.candidate_count,
      cost_micros: a.cost_micros,
      ...(a.cached === true ? { cached: true as const } : {}),
    })),
    merged,
    truncated: false,
  };
  return capped(trace);
}

/** The trace as JSON under MAX_TRACE_BYTES: merged entries are cut from the end until it fits. */
function capped(trace: Trace): TraceEntry {
  const encoder = new TextEncoder();
  let json = JSON.stringify(trace);
  let size = encoder.encode(json).byteLength;
  while (size > MAX_TRACE_BYTES && trace.merged.length > 0) {
    // Cut in proportion to the excess, at least one entry, so a huge trace takes few passes.
    const share = Math.ceil(trace.merged.length * (1 - MAX_TRACE_BYTES / size));
    trace.merged.length = Math.max(0, trace.merged.length - Math.max(1, share));
    trace.truncated = true;
    json = JSON.stringify(trace);
    size = encoder.encode(json).byteLength;
  }
  return { trace, json, bytes: size };
}
