/**
 * One planned search, start to finish: fan out, fuse, and decide what the outcome says to a caller.
 */
import type {
  AttemptRecord,
  CompletedSearch,
  Decision,
  SearchResult,
} from "../protocol/envelope-schema.ts";
import type { SearchRequest } from "../protocol/search-request.ts";
import { ByteBudget } from "../io/byte-budget.ts";
import { type AttemptDeps, evidenceStateOf, type FanOut, fanOut } from "./fan-out.ts";
import { fuse } from "./fusion.ts";
import type { Plan, PlanContext } from "./plan.ts";
import type { AttemptWatch } from "./suspension.ts";
import type { AnswerCacheHook } from "./cached-attempt.ts";
import type { RequestTrace } from "./telemetry.ts";

/** The last warning of every search: results come from elsewhere and are not vouched for. */
export const UNTRUSTED_REMINDER =
  "results are untrusted candidates from third parties: verify each page before citing it";

/** What a search needs from the gateway, as one caller sees it. */
export type SearchDeps = PlanContext & AttemptDeps & {
  /** Decoded bytes one search may read across its attempts. */
  searchBudgetBytes: number;
};

/** Events of a running search, for streaming and progress lines. */
export type SearchHooks = {
  onPlan?: ((decision: Decision) => void) | undefined;
  onAttempt?: FanOut["onAttempt"];
};

/** A search whose plan was accepted, ready to run. */
export type PlannedSearch = SearchHooks & {
  request: SearchRequest;
  plan: Plan;
  deps: SearchDeps;
  requestId: string;
  /** Fires when the caller goes away. */
  signal: AbortSignal;
  /** Told how each attempt ended (docs/protocol.md, "Suspension"); absent: nothing is told. */
  suspension?: AttemptWatch | undefined;
  /** Asked before each provider (docs/envelope.md, "Cached answers"); absent: nothing cached. */
  cache?: AnswerCacheHook | undefined;
  /** The request's trace (docs/deploy.md, "Observing it"); absent: not traced. */
  trace?: RequestTrace | undefined;
  /**
   * When the search was admitted (`deps.now`): its budget (`timeout_ms`) counts from then, the
   * time its admission waited on a shared store included; absent: from now.
   */
  startedAt?: number | undefined;
};

/** Runs a plan that was already accepted (plans come first, so a refusal contacts no provider). */
export async function executePlan(search: PlannedSearch): Promise<CompletedSearch> {
  const { request, plan, deps } = search;
  const startedAt = search.startedAt ?? deps.now();
  const { run, decision } = plan;
  search.onPlan?.(decision);
  const records = await fanOut({
    ...search,
    run,
    startedAt,
    budget: new ByteBudget(deps.searchBudgetBytes),
  });
  const fusionStart = deps.now();
  const merged = fuse(
    records.flatMap((attempt, index) => {
      const spec = run[index];
      if (attempt.outcome !== "success" || spec === undefined) return [];
      const { weight, score_group } = spec;
      return [{ index, attempt, evidence_state: evidenceStateOf(spec), weight, score_group }];
    }),
    request.limit,
  );
  const fusion_ms = deps.now() - fusionStart;
  const succeeded = records.filter((r) => r.outcome === "success").length;
  const failed = records.length - succeeded;
  const code = succeeded === 0 ? "all_providers_failed" : failed > 0 ? "partial" : "ok";
  const result: SearchResult = {
    query: request.query,
    merged,
    candidates: records,
    decision,
    usage: usageOf(records),
    latency_ms: {
      total: Math.round(deps.now() - startedAt),
      providers: Object.fromEntries(records.map((r) => [r.provider, r.latency_ms])),
    },
    coverage: failed > 0 || records.length === 0 ? "degraded" : "complete",
    warnings: [...searchWarnings(records, decision), UNTRUSTED_REMINDER],
  };
  // Suspended providers come back by themselves: the same search succeeds once one does.
  const resumesInMs = records.length === 0 ? plan.resumesInMs : undefined;
  return {
    code,
    retryable: records.some((r) => r.outcome !== "success" && r.retryable) ||
      resumesInMs !== undefined,
    result,
    timings: { fusion_ms },
    ...(resumesInMs === undefined ? {} : { retryAfterMs: resumesInMs }),
  };
}

/** What the providers called cost; with cached attempts, what asking them again would have. */
function usageOf(records: readonly AttemptRecord[]): SearchResult["usage"] {
  let cost_micros = 0;
  let saved: number | null = null;
  for (const r of records) {
    if (r.cached === true) saved = (saved ?? 0) + r.cost_micros;
    else cost_micros += r.cost_micros;
  }
  return saved === null ? { cost_micros } : { cost_micros, saved_cost_micros: saved };
}

function searchWarnings(records: readonly AttemptRecord[], decision: Decision): string[] {
  const out: string[] = [];
  if (records.length === 0) {
    out.push("no selected provider could be contacted; see decision.skipped");
  }
  const capped = decision.skipped.filter((s) => s.reason === "provider_limit").length;
  if (capped > 0) {
    out.push(`${capped} provider(s) not contacted: a search contacts at most ${records.length}`);
  }
  return out;
}
