/**
 * What one gateway instance keeps between requests: a client and a concurrency gate per provider,
 * and the searches in flight, which only `admit` counts and identical ones share.
 */
import type { SkipReason } from "../protocol/codes.ts";
import { BUILTIN_NAMES, type BuiltinName } from "../protocol/codes.ts";
import type { Decision, Envelope } from "../protocol/envelope-schema.ts";
import type { ProviderSpec } from "../protocol/manifest-schema.ts";
import { planSearch } from "../core/plan.ts";
import { Suspensions, type SuspensionView } from "../core/suspension.ts";
import type { SearchDeps } from "../core/search.ts";
import { Semaphore } from "../transport/semaphore.ts";
import { httpProvider } from "../transport/http-provider.ts";
import { inProcessProvider } from "../transport/in-process-provider.ts";
import type { ActionCall, ActionResult, ProviderClient } from "../transport/provider-client.ts";
import {
  ADMIN_SCOPE,
  type Caller,
  entitlement,
  GATEWAY_SUBJECT,
  requiredScope,
  subjectOf,
} from "../auth/caller.ts";
import type { ResolvedConfig } from "./gateway-config.ts";
import {
  type Admission,
  admitted,
  overloaded,
  refused,
  type RunOptions,
  type SearchAsk,
} from "./search-run.ts";
import { Slots } from "./slots.ts";
import { Descriptions } from "./descriptions.ts";
import { HealthProbes } from "./health-probes.ts";
import type { ProviderState } from "../protocol/envelope-schema.ts";
import { DESCRIBE_TIMEOUT_MS, HEALTH_TIMEOUT_MS } from "../protocol/limits.ts";
import type { Command } from "../protocol/codes.ts";
import type { ExpandAsk, RefreshAsk } from "../protocol/action-request.ts";
import { didYouMean } from "../protocol/did-you-mean.ts";
import { listOf } from "../protocol/search-request.ts";
import { buildEnvelope, problemEnvelope } from "../envelope/build-envelope.ts";

/** A provider action a caller asks for through a route. */
export type ActionAsk<T> = {
  request: T;
  caller: Caller;
  /** The `iss` of provider tokens unless TRACEFETCH_GATEWAY_ISSUER names one (an origin). */
  issuer: string;
  requestId: string;
  /** Fires when the caller goes away. */
  signal: AbortSignal;
};
import { Flight } from "./flight.ts";
import { searchIdentity } from "./search-identity.ts";

export class GatewayState {
  readonly #clients = new Map<string, ProviderClient>();
  readonly #gates = new Map<string, Semaphore>();
  readonly #searches: Slots;
  /** Fan-outs in flight by search identity (docs/envelope.md, "Coalescing"). */
  readonly #flights = new Map<string, Flight>();
  /** Providers left out after failing, for this instance only (docs/protocol.md, "Suspension"). */
  readonly #suspensions: Suspensions | null;
  /** What each provider said it speaks (docs/protocol.md, "describe"); null when not asked. */
  readonly #descriptions: Descriptions | null;
  /** Each provider's last health probe, shared by every caller (docs/envelope.md). */
  readonly #health: HealthProbes;
  /** What every caller's searches share. */
  readonly #shared: Omit<SearchDeps, "entitlement" | "headersFor">;

  constructor(readonly config: ResolvedConfig) {
    this.#searches = new Slots(config.maxInflight);
    this.#suspensions = config.suspendProviders ? new Suspensions(config.now) : null;
    this.#descriptions = config.describeProviders
      ? new Descriptions(config.now, (spec) => this.#client(spec))
      : null;
    const descriptions = this.#descriptions;
    this.#health = new HealthProbes(config.now, (spec) => this.#client(spec));
    this.#shared = {
      manifest: config.manifest,
      maxProviders: config.maxProviders,
      unavailable: (spec) => this.unavailable(spec),
      suspended: (spec) => this.#suspensions?.check(spec) ?? null,
      versionProblem: descriptions ? (spec) => descriptions.versionProblem(spec) : undefined,
      acceptsFilters: descriptions ? (spec) => descriptions.filtersOf(spec) : undefined,
      clientFor: (spec) => this.#client(spec),
      gateFor: (spec) => this.#gate(spec),
      now: config.now,
      searchBudgetBytes: config.searchBudgetBytes,
      maxPendingConnections: config.maxPendingConnections,
    };
  }

  /** Searches admitted and not yet answered. */
  get searchesInFlight(): number {
    return this.#searches.taken;
  }

  /**
   * Plans a search and, when the plan is accepted, joins an identical search in flight or gives
   * it an in-flight slot and starts its fan-out. Call it only once the request was read and
   * validated, so a slow or broken sender never holds a slot.
   */
  async admit(ask: SearchAsk): Promise<Admission> {
    const deps = this.#depsFor(ask.caller, ask.issuer);
    // Suspensions left out: who may share a search must not change as providers come and go.
    const steady = planSearch(ask.request, { ...deps, suspended: undefined });
    if (!steady.ok) return refused(steady.problem, ask.requestId);
    const key = await searchIdentity(
      ask.request,
      ask.caller,
      ask.issuer,
      this.#considered(steady.plan.decision),
    );
    const joined = this.#flights.get(key);
    if (joined !== undefined) return { ok: true, search: admitted(joined, ask, true, null) };
    const planned = planSearch(ask.request, deps);
    if (!planned.ok) return refused(planned.problem, ask.requestId);
    const release = this.#searches.tryTake();
    if (release === null) {
      return {
        ok: false,
        envelope: overloaded(ask.requestId, "the gateway is at its limit of searches in flight"),
      };
    }
    const { request, requestId } = ask;
    const { plan } = planned;
    // In the same turn as the plan, so no other search can claim the same half-open probe.
    const suspension = this.#suspensions?.watch(plan.run);
    const flight: Flight = new Flight({ request, plan, deps, requestId, suspension }, () => {
      if (this.#flights.get(key) === flight) this.#flights.delete(key);
    });
    this.#flights.set(key, flight);
    return { ok: true, search: admitted(flight, ask, false, release) };
  }

  /** Every provider a plan names, run or not: any of them may run once another is suspended. */
  #considered(decision: Decision): ProviderSpec[] {
    const names = new Set<string>([
      ...decision.providers,
      ...decision.trimmed.map((t) => t.provider),
      ...decision.skipped.map((s) => s.provider),
    ]);
    return this.config.manifest.providers.filter((p) => names.has(p.name));
  }

  /** Admits and runs a search, and answers with its envelope (the CLI's in-process search). */
  async search(ask: SearchAsk, options: RunOptions): Promise<Envelope> {
    const admission = await this.admit(ask);
    if (!admission.ok) return admission.envelope;
    return await admission.search.run(options, (run) => run.envelope);
  }

  /**
   * `POST /v1/expand`: the evidence behind a locator, from the one provider named, under the same
   * token and sensitivity rules as a search naming it. The locator goes to that provider only.
   */
  async expand(ask: ActionAsk<ExpandAsk>): Promise<Envelope> {
    const { request, requestId } = ask;
    const target = this.#target("expand", request.provider, ask.caller, requestId);
    if (!target.ok) return target.envelope;
    const spec = target.spec;
    const result = await this.#withProvider(
      spec,
      ask,
      (call) => this.#client(spec).expand({ locator: request.locator }, call),
    );
    switch (result.kind) {
      case "answer": {
        const { provider: _p, scope: _s, ...evidence } = result.answer;
        return buildEnvelope("expand", "ok", requestId, {
          result: { provider: spec.name, evidence },
        });
      }
      default:
        if (
          result.kind === "failure" &&
          (result.code === "locator_unknown" || result.code === "locator_expired")
        ) {
          return problemEnvelope("expand", result.code, requestId, result.message, "locator");
        }
        return actionProblem("expand", spec.name, result, requestId);
    }
  }

  /**
   * `POST /v1/refresh`: asks the named provider to bring its index up to date, for a caller whose
   * token grants ADMIN_SCOPE (docs/security.md); answers the provider's health.
   */
  async refresh(ask: ActionAsk<RefreshAsk>): Promise<Envelope> {
    const { caller, requestId } = ask;
    if (caller.kind === "anonymous") {
      return problemEnvelope(
        "refresh",
        "unauthorized",
        requestId,
        `refresh needs a token granting ${ADMIN_SCOPE}`,
      );
    }
    if (!caller.scopes.has(ADMIN_SCOPE)) {
      return problemEnvelope(
        "refresh",
        "forbidden",
        requestId,
        `the token does not grant ${ADMIN_SCOPE}, which refresh needs`,
      );
    }
    const target = this.#target("refresh", ask.request.provider, caller, requestId);
    if (!target.ok) return target.envelope;
    const spec = target.spec;
    const result = await this.#withProvider(spec, ask, (call) => this.#client(spec).refresh(call));
    switch (result.kind) {
      case "answer": {
        const { status, coverage, watermark, document_count, diagnostics } = result.answer;
        const health = this.#health.record(spec.name, {
          status,
          coverage,
          watermark,
          diagnostics,
          ...(document_count === undefined ? {} : { document_count }),
        });
        return buildEnvelope("refresh", "ok", requestId, {
          result: { provider: spec.name, health },
        });
      }
      default:
        return actionProblem("refresh", spec.name, result, requestId);
    }
  }

  /**
   * The provider an expand or refresh names, if this caller may use it now; else the envelope
   * that says why, with the codes a search naming it would get.
   */
  #target(
    command: Command,
    name: string,
    caller: Caller,
    requestId: string,
  ): { ok: true; spec: ProviderSpec } | { ok: false; envelope: Envelope } {
    const refuse = (code: Parameters<typeof problemEnvelope>[1], message: string) => ({
      ok: false as const,
      envelope: problemEnvelope(command, code, requestId, message, "provider"),
    });
    const spec = this.config.manifest.providers.find((p) => p.name === name);
    if (spec === undefined) {
      const known = this.visibleTo(caller).map((p) => p.name);
      const hint = didYouMean(name, known);
      return refuse(
        "unknown_provider",
        `there is no provider "${name}"${hint === null ? "" : ` (${hint})`}${
          known.length === 0
            ? "; there are no providers you may use"
            : `; the providers you may use: ${listOf(known)}`
        }`,
      );
    }
    const scope = requiredScope(spec);
    switch (entitlement(caller, spec)) {
      case "needs_token":
        return refuse("unauthorized", `provider "${spec.name}" needs a token granting ${scope}`);
      case "needs_scope":
        return refuse(
          "insufficient_scope",
          `the token does not grant ${scope}, which provider "${spec.name}" needs`,
        );
      case "granted":
        break;
    }
    const failed = (message: string, retryAfterMs?: number) => ({
      ok: false as const,
      envelope: problemEnvelope(command, "provider_failed", requestId, message, "provider", {
        anyRetryable: retryAfterMs !== undefined,
        ...(retryAfterMs === undefined ? {} : { retry_after_ms: retryAfterMs }),
      }),
    });
    const reason = this.unavailable(spec);
    if (reason !== null) {
      return failed(`provider "${spec.name}" cannot be contacted: ${reason.replaceAll("_", " ")}`);
    }
    const versionProblem = this.#descriptions?.versionProblem(spec) ?? null;
    if (versionProblem !== null) return failed(versionProblem);
    const held = this.suspensionOf(spec.name);
    if (held.state === "suspended") {
      const inMs = Math.max(0, Date.parse(held.until) - this.config.now());
      return failed(`provider "${spec.name}" is suspended until ${held.until}`, inMs);
    }
    return { ok: true, spec };
  }

  /**
   * Calls a provider's action within its own timeout and concurrency gate, with the provider
   * token a search attempt of this caller would carry.
   */
  async #withProvider<T>(
    spec: ProviderSpec,
    ask: ActionAsk<unknown>,
    act: (call: ActionCall) => Promise<T>,
  ): Promise<T> {
    const budgetMs = spec.timeout_seconds * 1000;
    const signal = AbortSignal.any([ask.signal, AbortSignal.timeout(budgetMs)]);
    const headersFor = this.#tokenHeaders(subjectOf(ask.caller), ask.issuer);
    const headers = headersFor ? await headersFor(spec, budgetMs) : {};
    const release = await this.#gate(spec).acquire(signal).catch(() => null);
    if (release === null) {
      return await act({
        signal: AbortSignal.abort(signal.reason),
        requestId: ask.requestId,
        headers,
      });
    }
    try {
      return await act({ signal, requestId: ask.requestId, headers });
    } finally {
      release();
    }
  }

  /**
   * Every provider this caller may see, as `/v1/status` (the cached health, no probe) and
   * `/v1/doctor` (`probe`: a fresh health, each probed at most once per TTL) show it.
   */
  async providerStates(
    caller: Caller,
    issuer: string,
    probe: boolean,
  ): Promise<ProviderState[]> {
    // One probe's answer is shown to every caller who may see the provider: it asks as the gateway.
    const headersFor = probe ? this.#tokenHeaders(GATEWAY_SUBJECT, issuer) : null;
    return await Promise.all(
      this.visibleTo(caller).map(async (p): Promise<ProviderState> => {
        const reason = this.unavailable(p);
        if (reason !== null) {
          return { name: p.name, state: reason === "disabled" ? "disabled" : "not_configured" };
        }
        const held = this.suspensionOf(p.name);
        const state: ProviderState = held.state === "suspended"
          ? { name: p.name, state: "suspended", until: held.until }
          : { name: p.name, state: "ready" };
        if (held.consecutiveFailures !== 0) state.consecutive_failures = held.consecutiveFailures;
        const health = probe
          ? await this.#health.probe(
            p,
            async () => headersFor ? await headersFor(p, HEALTH_TIMEOUT_MS) : {},
          )
          : this.#health.cached(p.name);
        if (health !== undefined) state.health = health;
        return state;
      }),
    );
  }

  /** A provider's suspension, as `/v1/status` shows it. */
  suspensionOf(name: string): SuspensionView {
    return this.#suspensions?.view(name) ?? { state: "ready", consecutiveFailures: 0 };
  }

  /** The providers this caller may see, in manifest order. */
  visibleTo(caller: Caller): ProviderSpec[] {
    return this.config.manifest.providers.filter((p) => entitlement(caller, p) === "granted");
  }

  /** Why a provider cannot be contacted with this configuration, or null when it can. */
  unavailable(spec: ProviderSpec): SkipReason | null {
    if (spec.timeout_seconds === 0) return "disabled";
    if (spec.transport === "builtin") {
      const name = spec.name as BuiltinName;
      return BUILTIN_NAMES.includes(name) && this.config.builtins[name] ? null : "not_configured";
    }
    switch (spec.auth.type) {
      case "none":
        return null;
      case "bearer":
        return this.config.secrets.has(spec.auth.secret) ? null : "not_configured";
      case "gateway-token":
        return this.config.auth.signer ? null : "not_configured";
      default: {
        const never: never = spec.auth;
        throw new Error(`unhandled auth ${JSON.stringify(never)}`);
      }
    }
  }

  /** Settles once every describe in flight has answered. */
  async described(): Promise<void> {
    await this.#descriptions?.settled();
  }

  /**
   * Starts, in the background, a describe of each provider this caller may see whose answer is
   * missing or stale; a search never waits for it.
   */
  #describeFor(caller: Caller, issuer: string): void {
    const descriptions = this.#descriptions;
    if (descriptions === null) return;
    // A describe answer serves every caller: it asks as the gateway, not as this caller.
    const headersFor = this.#tokenHeaders(GATEWAY_SUBJECT, issuer);
    for (const spec of this.visibleTo(caller)) {
      if (this.unavailable(spec) !== null) continue;
      descriptions.ask(
        spec,
        async () => headersFor ? await headersFor(spec, DESCRIBE_TIMEOUT_MS) : {},
      );
    }
  }

  /** The search dependencies as one caller sees them: sensitive providers only when entitled. */
  #depsFor(caller: Caller, issuer: string): SearchDeps {
    const headersFor = this.#tokenHeaders(subjectOf(caller), issuer);
    this.#describeFor(caller, issuer);
    return {
      ...this.#shared,
      entitlement: (spec) => entitlement(caller, spec),
      headersFor,
    };
  }

  /** Per-attempt headers: a token for each `gateway-token` provider, minted for this caller. */
  #tokenHeaders(subject: string, origin: string): SearchDeps["headersFor"] {
    const { signer, gatewayIssuer } = this.config.auth;
    if (!signer) return null;
    const issuer = gatewayIssuer ?? origin;
    return async (spec, budgetMs): Promise<Record<string, string>> => {
      if (spec.auth.type !== "gateway-token") return {};
      const token = await signer.mint({
        issuer,
        audience: spec.name,
        subject,
        scope: requiredScope(spec),
        budgetMs,
      });
      return { authorization: `Bearer ${token}` };
    };
  }

  #client(spec: ProviderSpec): ProviderClient {
    let client = this.#clients.get(spec.name);
    if (client) return client;
    if (spec.transport === "builtin") {
      const adapter = this.config.builtins[spec.name as BuiltinName];
      if (!adapter) throw new Error(`built-in ${spec.name} planned without an adapter`);
      client = inProcessProvider(adapter);
    } else {
      const secret = spec.auth.type === "bearer"
        ? this.config.secrets.get(spec.auth.secret)
        : undefined;
      client = httpProvider({
        name: spec.name,
        scope: spec.scope,
        endpoint: spec.endpoint as string,
        fetch: this.config.fetch,
        now: () => Date.now(),
        ...(secret ? { headers: () => ({ authorization: `Bearer ${secret}` }) } : {}),
      });
    }
    this.#clients.set(spec.name, client);
    return client;
  }

  #gate(spec: ProviderSpec): Semaphore {
    let gate = this.#gates.get(spec.name);
    if (!gate) {
      gate = new Semaphore(spec.max_concurrency);
      this.#gates.set(spec.name, gate);
    }
    return gate;
  }
}

/** What an expand or refresh that the provider did not answer tells its caller. */
function actionProblem(
  command: "expand" | "refresh",
  provider: string,
  result: Exclude<ActionResult<unknown>, { kind: "answer" }>,
  requestId: string,
): Envelope {
  if (result.kind === "unsupported") {
    return problemEnvelope(
      command,
      "action_unsupported",
      requestId,
      `provider "${provider}" does not implement ${command}: ${result.message}`,
      "provider",
    );
  }
  return problemEnvelope(command, "provider_failed", requestId, result.message, undefined, {
    anyRetryable: result.retryable,
    ...(result.retry_after_ms === undefined ? {} : { retry_after_ms: result.retry_after_ms }),
  });
}
