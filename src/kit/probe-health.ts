/**
 * healthFromProbe(probe, signal): a provider's `health` answer from one cheap call to what it
 * bridges. A probe that fails is never healthy: a rate limit is `degraded` (the service is there
 * but refusing for now), any other failure `unavailable`, both with `coverage: unknown`, no
 * watermark and the failure's message as a diagnostic. The caller's own departure is rethrown.
 */
import type { HealthCoverage } from "../protocol/codes.ts";
import { type HealthAnswer, ProviderError } from "../protocol/provider-contract.ts";

export type ProbeOptions = {
  /** What a successful probe says of coverage (a live API covers what it indexes: `complete`). */
  coverage?: HealthCoverage;
  /** Epoch milliseconds: a live source is as fresh as the probe that reached it. */
  now?: () => number;
};

export async function healthFromProbe(
  probe: (signal: AbortSignal) => Promise<{ document_count?: number } | void>,
  signal: AbortSignal,
  options: ProbeOptions = {},
): Promise<HealthAnswer> {
  const now = options.now ?? (() => Date.now());
  try {
    const found = await probe(signal);
    return {
      status: "ok",
      coverage: options.coverage ?? "complete",
      watermark: new Date(now()).toISOString(),
      ...(found?.document_count === undefined ? {} : { document_count: found.document_count }),
    };
  } catch (error) {
    if (signal.aborted) throw error;
    const limited = error instanceof ProviderError && error.code === "rate_limited";
    return {
      status: limited ? "degraded" : "unavailable",
      coverage: "unknown",
      watermark: null,
      diagnostics: [error instanceof Error ? error.message : String(error)],
    };
  }
}
