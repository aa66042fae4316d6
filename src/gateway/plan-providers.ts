/**
 * A search's plan by its providers' breakers, and the providers its decision names, as manifest
 * entries, for what a search does beside it.
 */
import type { Decision } from "../protocol/envelope-schema.ts";
import type { Manifest, ProviderSpec } from "../protocol/manifest-schema.ts";
import { type Picked, type Plan, type PlanContext, walkPlan } from "../core/plan.ts";
import { type BreakerReads, Suspensions } from "./suspensions.ts";

/** No breaker read: every provider as if closed. */
export const NO_READS: BreakerReads = new Map();

/** What a planner is told of every provider when it asks whether each is suspended. */
const ALL_SUSPENDED = { until: "", inMs: 0 };

/** The plan of `picked` by these breakers' reads. */
export function planWith(picked: Picked, context: PlanContext, reads: BreakerReads): Plan {
  return walkPlan(picked, { ...context, suspended: (spec) => Suspensions.check(reads, spec) });
}

/**
 * Whether what a search costs its caller is the same whatever its breakers say (`hoped`: its plan
 * with none suspended): true unless a suspension would change which providers are charged, as when
 * a provider held back lets another past the cap of providers a search contacts.
 */
export function costFixed(
  manifest: Manifest,
  picked: Picked,
  context: PlanContext,
  hoped: Plan,
): boolean {
  const none = walkPlan(picked, { ...context, suspended: () => ALL_SUSPENDED });
  const names = (plan: Plan) => charged(manifest, plan.decision).map((p) => p.name).join("\n");
  return names(none) === names(hoped);
}

/** The providers a plan skipped as suspended: any whose suspension ended is probed now. */
export function heldBack(manifest: Manifest, decision: Decision): ProviderSpec[] {
  const names = new Set(
    decision.skipped.filter((s) => s.reason === "suspended").map((s) => s.provider),
  );
  return manifest.providers.filter((p) => names.has(p.name));
}

/**
 * What a search costs its caller (docs/envelope.md, "Caller limits"): the providers its plan runs
 * and those it holds back as suspended, whether they are then asked or answered from the cache.
 */
export function charged(manifest: Manifest, decision: Decision): ProviderSpec[] {
  const names = new Set<string>([
    ...decision.providers,
    ...decision.skipped.filter((s) => s.reason === "suspended").map((s) => s.provider),
  ]);
  return manifest.providers.filter((p) => names.has(p.name));
}
