/**
 * An attempt's record (docs/envelope.md, "The search result") from what its transport answered:
 * an answer sanitised, cut to the limit and filtered, with the message of an honest empty; a
 * failure as its outcome and code. Every field is written in the envelope's order.
 */
import type { AttemptRecord, Candidate } from "../protocol/envelope-schema.ts";
import type { ProviderSpec } from "../protocol/manifest-schema.ts";
import type { SearchFilters } from "../protocol/search-filters.ts";
import type { TransportResult } from "../transport/provider-client.ts";
import { compileFilters, filterAnswer } from "./filters.ts";
import { sanitiseAnswer } from "./sanitize.ts";

export function attemptRecord(
  spec: ProviderSpec,
  result: TransportResult,
  limit: number,
  latency: number,
  filters: SearchFilters | undefined,
): AttemptRecord {
  const latency_ms = Math.max(0, latency);
  if (result.kind === "answer") {
    // Filters apply after sanitising, to every candidate, whatever the provider was sent.
    let filtered_out: number | null = null;
    let kept: { candidates: Candidate[]; warnings: string[] };
    if (filters === undefined) kept = sanitiseAnswer(result.candidates, result.warnings, limit);
    else {
      const filtered = filterAnswer(
        result.candidates,
        result.warnings,
        limit,
        compileFilters(filters),
      );
      filtered_out = filtered.filtered_out;
      kept = filtered;
    }
    const { candidates, warnings } = kept;
    // One literal per record, in the envelope's field order: spreads of a base here were a
    // measurable share of each attempt's cost.
    const record: AttemptRecord = {
      provider: spec.name,
      scope: spec.scope,
      source_class: spec.source_class,
      sensitivity: spec.sensitivity,
      latency_ms,
      // A provider that reports what the call cost (Exa does) is believed over the manifest.
      cost_micros: result.cost_micros ?? spec.cost_micros,
      outcome: "success",
      code: "ok",
      retryable: false,
      message: candidates.length > 0
        ? ""
        : filtered_out !== null && filtered_out > 0
        ? "an honest empty after filtering: every candidate failed the search's filters"
        : "an honest empty: the provider found nothing",
      candidate_count: candidates.length,
      warnings,
      candidates,
    };
    if (filtered_out === null) return record;
    // filtered_out sits before warnings in the envelope.
    const { warnings: w, candidates: c, ...head } = record;
    return { ...head, filtered_out, warnings: w, candidates: c };
  }
  const record: AttemptRecord = {
    provider: spec.name,
    scope: spec.scope,
    source_class: spec.source_class,
    sensitivity: spec.sensitivity,
    latency_ms,
    cost_micros: spec.cost_micros,
    outcome: result.outcome,
    code: result.code,
    retryable: result.retryable,
    message: result.message,
    candidate_count: 0,
    warnings: [],
  };
  if (result.budget !== undefined) record.budget = result.budget;
  if (result.retry_after_ms !== undefined) record.retry_after_ms = result.retry_after_ms;
  return record;
}
