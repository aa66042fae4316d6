/** The providers a plan's decision names, as manifest entries, for what a search does beside it. */
import type { Decision } from "../protocol/envelope-schema.ts";
import type { Manifest, ProviderSpec } from "../protocol/manifest-schema.ts";

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
