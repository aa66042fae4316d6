/**
 * What changed between a recorded search and the same search run again: the two merged lists'
 * overlap@10 and rank-biased overlap, the providers that succeeded then and do not now, and, over
 * every replayed search, the means and the figures a baseline replay is compared on.
 */
import type { Envelope } from "../../protocol/envelope-schema.ts";
import type { ReplayResult } from "../../protocol/replay-result-schema.ts";
import {
  REPLAY_OVERLAP_DEPTH,
  REPLAY_RBO_P,
  REPLAY_REGRESSION_THRESHOLD,
} from "../../protocol/trace-limits.ts";
import type { Trace } from "../../protocol/trace-schema.ts";
import { overlapAt, rankBiasedOverlap } from "./overlap.ts";

export type QueryRow = ReplayResult["queries"][number];

/**
 * The recorded list as comparable keys: a locator kept in the clear as it is; a hashed one as the
 * replayed locator with the same HMAC when there is one, else as its HMAC (which matches nothing).
 */
export function recordedList(trace: Trace, unhash: ReadonlyMap<string, string>): string[] {
  return trace.merged.map((entry) =>
    entry.locator ??
      (entry.locator_hmac === undefined
        ? `withheld:${entry.rank}`
        : unhash.get(entry.locator_hmac) ?? `hmac:${entry.locator_hmac}`)
  );
}

/** The replayed search's merged list, as locators. */
export function replayedList(envelope: Envelope): string[] {
  const result = envelope.result;
  return result !== undefined && "merged" in result && result.merged
    ? result.merged.map((m) => m.locator)
    : [];
}

export function compareSearch(
  trace: Trace,
  query: string,
  envelope: Envelope,
  recorded: readonly string[],
  known: ReadonlySet<string>,
): QueryRow {
  const replayed = replayedList(envelope);
  return {
    request_id: trace.request_id,
    query,
    code: envelope.code,
    overlap_at_10: overlapAt(recorded, replayed, REPLAY_OVERLAP_DEPTH),
    rbo: rankBiasedOverlap(recorded, replayed, REPLAY_RBO_P),
    now_failing: nowFailing(trace, envelope, known),
  };
}

/** Providers whose recorded attempt succeeded and whose replayed one did not, or did not run. */
function nowFailing(
  trace: Trace,
  envelope: Envelope,
  known: ReadonlySet<string>,
): QueryRow["now_failing"] {
  const result = envelope.result;
  const search = result !== undefined && "decision" in result ? result : null;
  const failing: QueryRow["now_failing"] = [];
  for (const recorded of trace.attempts) {
    if (recorded.outcome !== "success") continue;
    const { provider } = recorded;
    const attempt = search?.candidates?.find((a) => a.provider === provider);
    if (attempt?.outcome === "success") continue;
    if (attempt !== undefined) {
      failing.push({ provider, outcome: attempt.outcome, code: attempt.code });
      continue;
    }
    const skipped = search?.decision.skipped.find((s) => s.provider === provider);
    const trimmed = search?.decision.trimmed.some((t) => t.provider === provider);
    const code = !known.has(provider)
      ? "not_in_manifest"
      : search === null
      ? envelope.code
      : skipped?.reason ?? (trimmed ? "cost_ceiling" : "not_visible");
    failing.push({ provider, outcome: "not_contacted", code });
  }
  return failing;
}

/** The means over the replayed searches, and how often each provider now fails. */
export function overallOf(rows: readonly QueryRow[]): ReplayResult["overall"] {
  const mean = (pick: (row: QueryRow) => number) =>
    rows.length === 0 ? null : rows.reduce((sum, row) => sum + pick(row), 0) / rows.length;
  const failing = new Map<string, number>();
  for (const row of rows) {
    for (const f of row.now_failing) failing.set(f.provider, (failing.get(f.provider) ?? 0) + 1);
  }
  return {
    overlap_at_10: mean((row) => row.overlap_at_10),
    rbo: mean((row) => row.rbo),
    providers_now_failing: [...failing].map(([provider, searches]) => ({ provider, searches })),
  };
}

/** The figures a replay is compared on, by name: overlap, RBO and, with judgments, the metrics. */
export function figuresOf(result: Pick<ReplayResult, "overall" | "metrics">): Map<string, number> {
  const figures = new Map<string, number>();
  if (result.overall.overlap_at_10 !== null) {
    figures.set("overlap_at_10", result.overall.overlap_at_10);
  }
  if (result.overall.rbo !== null) figures.set("rbo", result.overall.rbo);
  for (const [name, value] of Object.entries(result.metrics?.replayed ?? {})) {
    figures.set(name, value);
  }
  return figures;
}

/** Every figure present in both that fell by more than REPLAY_REGRESSION_THRESHOLD. */
export function dropsSince(
  baseline: ReadonlyMap<string, number>,
  now: ReadonlyMap<string, number>,
): NonNullable<ReplayResult["baseline"]>["drops"] {
  const drops: NonNullable<ReplayResult["baseline"]>["drops"] = [];
  for (const [figure, before] of baseline) {
    const after = now.get(figure);
    if (after === undefined) continue;
    const drop = before - after;
    if (drop > REPLAY_REGRESSION_THRESHOLD) {
      drops.push({ figure, baseline: before, replayed: after, drop });
    }
  }
  return drops;
}
