/**
 * The planner: which providers a search contacts, in manifest order, and why the others are not
 * (tiers and their cost ceilings, scopes and isolation, the provider cap).
 */
import type { SkipReason } from "../protocol/codes.ts";
import type { Decision } from "../protocol/envelope-schema.ts";
import type { Manifest, ProviderSpec } from "../protocol/manifest-schema.ts";
import { didYouMean } from "../protocol/did-you-mean.ts";
import { MAX_LISTED_NAMES } from "../protocol/limits.ts";
import { listOf, type RequestProblem, type SearchRequest } from "../protocol/search-request.ts";
import type { SuspendedNow } from "./suspension.ts";

export type Plan = {
  /** Providers to contact, in manifest order. */
  run: ProviderSpec[];
  decision: Decision;
  /** When the first provider skipped as `suspended` may be contacted again, in ms from planning. */
  resumesInMs?: number;
};

export type PlanContext = {
  manifest: Manifest;
  /** At most this many providers are contacted (TRACEFETCH_MAX_PROVIDERS). */
  maxProviders: number;
  /**
   * Whether this caller may see a provider. Providers it may not see are never planned or listed;
   * naming one gets `unauthorized` (no token) or `insufficient_scope` (a token without its scope).
   */
  entitlement: (spec: ProviderSpec) => "granted" | "needs_token" | "needs_scope";
  /** Why a selected provider cannot run now (a built-in without its key), or null when it can. */
  unavailable: (spec: ProviderSpec) => SkipReason | null;
  /** Whether a provider is suspended now (docs/protocol.md, "Suspension"); absent: never. */
  suspended?: ((spec: ProviderSpec) => SuspendedNow | null) | undefined;
  /**
   * Why a provider cannot be spoken to: its describe lists no protocol major this gateway speaks
   * (docs/protocol.md, "describe"). Null when it can; absent: never.
   */
  versionProblem?: ((spec: ProviderSpec) => string | null) | undefined;
};

export type PlanResult = { ok: true; plan: Plan } | { ok: false; problem: RequestProblem };

/**
 * What a request selects before any provider's state is read: the providers it names (in manifest
 * order, whatever then runs), and its tier's cost ceiling. Which providers are named depends on
 * the request and the caller only, so it is what identical searches share.
 */
export type Picked = { named: ProviderSpec[]; tier: string | null; ceiling: number | null };

export type PickResult = { ok: true; picked: Picked } | { ok: false; problem: RequestProblem };

/** Plans a search in one step: what it picks, then which of those run (the CLI, tests). */
export function planSearch(request: SearchRequest, ctx: PlanContext): PlanResult {
  const picked = pickProviders(request, ctx);
  return picked.ok ? { ok: true, plan: walkPlan(picked.picked, ctx) } : picked;
}

/** The providers a request names, or the problem that refuses it before anything runs. */
export function pickProviders(
  request: SearchRequest,
  ctx: Pick<PlanContext, "manifest" | "entitlement">,
): PickResult {
  const all = ctx.manifest.providers;
  // Nothing the caller writes can select a provider; the one who can fix this is the operator.
  if (all.length === 0) {
    return {
      ok: false,
      problem: {
        code: "no_providers_selected",
        message:
          "this gateway's manifest declares no providers, so no search can run; its operator must add some",
      },
    };
  }
  const visible = all.filter((p) => ctx.entitlement(p) === "granted");
  const selected = select(request, all, visible, ctx.entitlement);
  if (!selected.ok) return selected;
  const picked = selected.providers;
  const isolated = picked.find((p) => p.isolated);
  if (isolated && picked.length > 1) {
    return refuse(
      "isolation_conflict",
      `provider "${isolated.name}" is isolated and runs only alone; select it by itself`,
      "providers",
    );
  }
  if (picked.length === 0) {
    return refuse("no_providers_selected", "the request selects no provider", "scope");
  }
  const tier = request.tier ?? ctx.manifest.default_tier;
  if (request.tier !== null && !Object.hasOwn(ctx.manifest.tiers, request.tier)) {
    return refuse("unknown_tier", `there is no tier "${request.tier}"`, "tier");
  }
  const ceiling = tier === null ? null : ctx.manifest.tiers[tier]?.cost_ceiling_micros ?? null;
  return { ok: true, picked: { named: picked, tier, ceiling } };
}

/**
 * Which of the named providers run, in manifest order, and why each other one does not: a
 * provider that cannot be contacted, then one suspended, then the ceiling and the cap.
 */
export function walkPlan(picked: Picked, ctx: PlanContext): Plan {
  const { ceiling } = picked;
  const decision: Decision = { tier: picked.tier, providers: [], trimmed: [], skipped: [] };
  const run: ProviderSpec[] = [];
  let spent = 0;
  let resumesInMs: number | undefined;
  for (const spec of picked.named) {
    const reason = spec.timeout_seconds === 0 ? "disabled" : ctx.unavailable(spec);
    if (reason !== null) {
      decision.skipped.push({ provider: spec.name, reason });
      continue;
    }
    const versionProblem = ctx.versionProblem?.(spec) ?? null;
    if (versionProblem !== null) {
      decision.skipped.push({
        provider: spec.name,
        reason: "protocol_version_unsupported",
        message: versionProblem,
      });
      continue;
    }
    // Before the ceiling and the cap: a provider not contacted spends neither.
    const suspended = ctx.suspended?.(spec) ?? null;
    if (suspended !== null) {
      decision.skipped.push({ provider: spec.name, reason: "suspended", until: suspended.until });
      resumesInMs = Math.min(resumesInMs ?? suspended.inMs, suspended.inMs);
      continue;
    }
    // Walk in manifest order, keeping each provider while the running cost fits under the ceiling.
    if (ceiling !== null && spent + spec.cost_micros > ceiling) {
      decision.trimmed.push({
        provider: spec.name,
        reason: "cost_ceiling",
        cost_micros: spec.cost_micros,
      });
      continue;
    }
    if (run.length === ctx.maxProviders) {
      decision.skipped.push({ provider: spec.name, reason: "provider_limit" });
      continue;
    }
    spent += spec.cost_micros;
    run.push(spec);
    decision.providers.push(spec.name);
  }
  const plan: Plan = { run, decision };
  if (resumesInMs !== undefined) plan.resumesInMs = resumesInMs;
  return plan;
}

type Selection = { ok: true; providers: ProviderSpec[] } | { ok: false; problem: RequestProblem };

function select(
  request: SearchRequest,
  all: readonly ProviderSpec[],
  visible: readonly ProviderSpec[],
  entitlement: PlanContext["entitlement"],
): Selection {
  const inScope = scopeMembers(request.scope ?? "auto", all, visible);
  if (inScope === null) {
    const scope = request.scope as string;
    return refuse(
      "unknown_scope",
      `there is no scope "${scope}"${choices(scope, "scopes", visibleScopes(visible))}`,
      "scope",
    );
  }
  // A manifest scope whose providers this caller may not see is refused like naming them.
  const hidden = request.scope === null
    ? undefined
    : all.find((p) => p.scope === request.scope && !visible.includes(p));
  if (hidden && inScope.length === 0 && request.providers === null) {
    return notEntitled(hidden, entitlement);
  }
  if (request.providers === null) return { ok: true, providers: inScope };
  const named = new Set(request.providers);
  for (const name of named) {
    const spec = all.find((p) => p.name === name);
    if (spec === undefined) {
      const names = visible.map((p) => p.name);
      return refuse(
        "unknown_provider",
        `there is no provider "${name}"${choices(name, "providers", names)}`,
        "providers",
      );
    }
    if (!visible.includes(spec)) return notEntitled(spec, entitlement);
    if (request.scope !== null && !inScope.includes(spec)) {
      return refuse(
        "provider_not_in_scope",
        `provider "${name}" is not in scope "${request.scope}"`,
        "providers",
      );
    }
  }
  // Without a scope, the named providers are the selection (an isolated one may run alone).
  return { ok: true, providers: visible.filter((p) => named.has(p.name)) };
}

/**
 * The scopes a caller may search: the request scopes that select anything it may see, then the
 * scopes of the providers it may see. A scope only hidden providers declare is never named.
 */
function visibleScopes(visible: readonly ProviderSpec[]): string[] {
  const scopes = ["auto"];
  if (visible.some((p) => !p.isolated && p.sensitivity === "public")) scopes.push("public");
  for (const p of visible) if (!scopes.includes(p.scope)) scopes.push(p.scope);
  return scopes;
}

/**
 * What a caller may use instead of an unknown name: the closest one, then all in manifest order
 * (at most MAX_LISTED_NAMES), only from what it may see, so a hidden provider is never named.
 */
function choices(name: string, what: string, known: readonly string[]): string {
  if (known.length === 0) return `; there are no ${what} you may use`;
  const hint = didYouMean(name, known);
  const listed = known.length > MAX_LISTED_NAMES
    ? `${known.slice(0, MAX_LISTED_NAMES).join(", ")} and ${
      known.length - MAX_LISTED_NAMES
    } more (GET /v1/providers lists them)`
    : listOf(known);
  return `${hint === null ? "" : ` (${hint})`}; the ${what} you may use: ${listed}`;
}

/** Names of sensitive providers are not secret, their content is: say what access would need. */
function notEntitled(spec: ProviderSpec, entitlement: PlanContext["entitlement"]): Selection {
  const scope = `tracefetch:${spec.scope}`;
  return entitlement(spec) === "needs_token"
    ? refuse("unauthorized", `provider "${spec.name}" needs a token granting ${scope}`, "providers")
    : refuse(
      "insufficient_scope",
      `the token does not grant ${scope}, which provider "${spec.name}" needs`,
      "providers",
    );
}

/** The providers a scope means, or null for a scope nobody declares. */
function scopeMembers(
  scope: string,
  all: readonly ProviderSpec[],
  visible: readonly ProviderSpec[],
): ProviderSpec[] | null {
  switch (scope) {
    case "auto":
      return visible.filter((p) => !p.isolated);
    case "public":
      return visible.filter((p) => !p.isolated && p.sensitivity === "public");
    case "local":
      return visible.filter((p) => p.name === "workspace" && p.transport === "builtin");
    default:
      if (!all.some((p) => p.scope === scope)) return null;
      return visible.filter((p) => p.scope === scope);
  }
}

function refuse(code: RequestProblem["code"], message: string, field: string): {
  ok: false;
  problem: RequestProblem;
} {
  return { ok: false, problem: { code, message, field } };
}
