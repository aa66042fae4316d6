/**
 * Who is calling, as far as the gateway knows, and what that caller may see (docs/security.md).
 */
import type { ProviderSpec } from "../protocol/manifest-schema.ts";

export type Caller =
  | { kind: "anonymous" }
  | { kind: "token"; subject: string; scopes: ReadonlySet<string> };

export const ANONYMOUS: Caller = { kind: "anonymous" };

/**
 * The entitlement `POST /v1/refresh` needs (docs/security.md). Outside the `tracefetch:<scope>`
 * names, so no provider scope and not the `tracefetch:*` wildcard grants it.
 */
export const ADMIN_SCOPE = "tracefetch-admin";

/** The entitlement `GET /metrics` needs with TRACEFETCH_REQUIRE_AUTH; ADMIN_SCOPE grants it too. */
export const METRICS_SCOPE = "tracefetch-metrics";

/** The scope a token must grant to see a provider: `tracefetch:<scope>`, or the wildcard. */
export function requiredScope(spec: Pick<ProviderSpec, "scope">): string {
  return `tracefetch:${spec.scope}`;
}

/** Public providers are for everyone; sensitive ones need a token granting their scope. */
export function entitlement(
  caller: Caller,
  spec: ProviderSpec,
): "granted" | "needs_token" | "needs_scope" {
  if (spec.sensitivity === "public") return "granted";
  if (caller.kind === "anonymous") return "needs_token";
  return caller.scopes.has("tracefetch:*") || caller.scopes.has(requiredScope(spec))
    ? "granted"
    : "needs_scope";
}

/** The `sub` a provider token carries for this caller. */
/**
 * The `sub` of a provider token for a describe or health probe: one answer serves every caller who
 * may see the provider, so the gateway asks as itself, never as whichever caller came first.
 */
export const GATEWAY_SUBJECT = "tracefetch-gateway";

export function subjectOf(caller: Caller): string {
  return caller.kind === "token" ? caller.subject : "anonymous";
}
