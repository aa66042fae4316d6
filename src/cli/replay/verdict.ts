/**
 * What a replay answers: ok, unless a figure fell since the baseline, a provider that succeeded
 * when recorded now fails in more than REPLAY_MAX_FAILING_SHARE of the replayed searches (unless
 * `--allow-failing`), or nothing could be replayed; each refusal is exit 2, `invalid_field`.
 */
import type { Envelope } from "../../protocol/envelope-schema.ts";
import type { ReplayResult } from "../../protocol/replay-result-schema.ts";
import {
  REPLAY_MAX_FAILING_SHARE,
  REPLAY_REGRESSION_THRESHOLD,
} from "../../protocol/trace-limits.ts";
import { buildEnvelope } from "../../envelope/build-envelope.ts";

/**
 * ok, unless a figure fell since the baseline, a provider that succeeded when recorded now fails
 * in more than half of the replayed searches (unless `allowFailing`), or nothing could be replayed.
 */
export function verdict(result: ReplayResult, requestId: string, allowFailing: boolean): Envelope {
  const drops = result.baseline?.drops ?? [];
  if (drops.length > 0) {
    const list = drops.map((d) =>
      `${d.figure} ${d.baseline.toFixed(4)} -> ${d.replayed.toFixed(4)}`
    );
    return buildEnvelope("replay", "invalid_field", requestId, {
      result,
      error: {
        message: `regression against ${result.baseline?.file}: ${
          list.join(", ")
        } (each fell by more than ${REPLAY_REGRESSION_THRESHOLD})`,
        field: "manifest",
      },
    });
  }
  const failing = allowFailing ? [] : mostlyFailing(result);
  if (failing.length > 0) {
    return buildEnvelope("replay", "invalid_field", requestId, {
      result,
      error: {
        message: `${
          failing.join("; ")
        }: what it finds is missing from the comparison; start it, fix it, or pass --allow-failing to compare anyway`,
        field: "manifest",
      },
    });
  }
  if (result.replayed === 0) {
    return buildEnvelope("replay", "invalid_field", requestId, {
      result,
      error: {
        message:
          `none of the ${result.read} traces kept its query's text, so none can run again; record with TRACEFETCH_TRACE_RAW_QUERIES=1`,
        field: "traces",
      },
    });
  }
  return buildEnvelope("replay", "ok", requestId, { result });
}

/**
 * Each provider that succeeded when recorded and fails now in more than
 * REPLAY_MAX_FAILING_SHARE of the replayed searches, as a phrase naming it, how often, and its
 * codes.
 */
function mostlyFailing(result: ReplayResult): string[] {
  const phrases: string[] = [];
  for (const { provider, searches } of result.overall.providers_now_failing) {
    if (searches <= result.replayed * REPLAY_MAX_FAILING_SHARE) continue;
    const codes = new Set(
      result.queries.flatMap((q) =>
        q.now_failing.filter((f) => f.provider === provider).map((f) => f.code)
      ),
    );
    phrases.push(
      `provider ${provider} succeeded when recorded and now fails in ${searches} of ${result.replayed} replayed searches (${
        [...codes].join(", ")
      })`,
    );
  }
  return phrases;
}
