/**
 * The provider actions a caller asks for through a route, `POST /v1/expand` and `POST /v1/refresh`:
 * the one provider named, under the token and sensitivity rules of a search naming it, its own
 * timeout and its concurrency gate. GatewayState loads this module with the first expand or
 * refresh, so on the Worker it is a module of its own (docs/deploy.md) that searches never load.
 */
import type { Command, SkipReason } from "../protocol/codes.ts";
import type { Envelope, ProviderHealth } from "../protocol/envelope-schema.ts";
import type { ProviderSpec } from "../protocol/manifest-schema.ts";
import type { ExpandAsk, RefreshAsk } from "../protocol/action-request.ts";
import type { OptionalAction } from "../protocol/provider-actions.ts";
import { didYouMean } from "../protocol/did-you-mean.ts";
import { listOf } from "../protocol/search-request.ts";
import type { SuspensionView } from "../core/suspension.ts";
import type { SearchDeps } from "../core/search.ts";
import type {
  ActionCall,
  ActionResult,
  Gate,
  ProviderClient,
} from "../transport/provider-client.ts";
import { ADMIN_SCOPE, type Caller, entitlement, requiredScope } from "../core/caller.ts";
import { buildEnvelope, problemEnvelope } from "../envelope/build-envelope.ts";
import { PLACE_RETRY_AFTER_MS } from "../protocol/admission-limits.ts";
import { STORE_RETRY_MS } from "../protocol/state-limits.ts";
import type { ResolvedConfig } from "../config/gateway-config.ts";
import { type Placed, placedCall, type Queued } from "./placed-call.ts";
import type { CallerAsk } from "./caller-limits.ts";
import type { RequestTrace } from "../core/telemetry.ts";

/** A provider action a caller asks for through a route. */
export type ActionAsk<T> = CallerAsk & {
  request: T;
  /** Fires when the caller goes away. */
  signal: AbortSignal;
  /** The request's trace: the provider call is a client span, whose traceparent it is sent. */
  trace?: RequestTrace | undefined;
};

/** What an action needs of the gateway instance it runs in; GatewayState hands it over. */
export type ActionHost = {
  readonly config: ResolvedConfig;
  visibleTo(caller: Caller): ProviderSpec[];
  unavailable(spec: ProviderSpec): SkipReason | null;
  suspensionOf(spec: ProviderSpec): Promise<SuspensionView>;
  /** Why the provider's protocol majors rule it out (describe), or null. */
  versionProblem(spec: ProviderSpec): string | null;
  /** Whether the provider's describe lists an action; undefined when not known. */
  declares(spec: ProviderSpec, action: OptionalAction): boolean | undefined;
  client(spec: ProviderSpec): ProviderClient;
  gate(spec: ProviderSpec): Gate;
  tokenHeaders(caller: Caller): SearchDeps["headersFor"];
  /** Keeps a health answer as the provider's last probe, as `/v1/status` shows it. */
  recordHealth(name: string, answer: Omit<ProviderHealth, "checked_at">): ProviderHealth;
  /**
   * Drops a provider's cached answers everywhere (docs/envelope.md, "Cached answers"); false when
   * the store could not be told.
   */
  invalidateCache?(name: string): Promise<boolean>;
};

/**
 * `POST /v1/expand`: the evidence behind a locator, from the one provider named, under the same
 * token and sensitivity rules as a search naming it. The locator goes to that provider only.
 */
export async function runExpand(
  host: ActionHost,
  ask: ActionAsk<ExpandAsk>,
): Promise<Envelope> {
  const { request, requestId } = ask;
  const target = await actionTarget(host, "expand", request.provider, ask.caller, requestId);
  if (!target.ok) return target.envelope;
  const spec = target.spec;
  const span = ask.trace?.attempt(spec.name, "expand") ?? null;
  const started = host.config.now();
  const placed = await withProvider(
    host,
    spec,
    ask,
    "expand",
    (call) =>
      host.client(spec).expand(
        { locator: request.locator },
        span === null ? call : { ...call, traceparent: span.traceparent, response: span },
      ),
  );
  if (span !== null) {
    const [outcome, code] = placed.kind !== "called"
      ? ["skipped", placed.kind]
      : placed.result.kind === "answer"
      ? ["success", "ok"]
      : placed.result.kind === "failure"
      ? [placed.result.outcome, placed.result.code]
      : ["unsupported", "action_unsupported"];
    const latencyMs = host.config.now() - started;
    span.end({
      provider: spec.name,
      outcome,
      code,
      latencyMs,
      costMicros: 0,
      cached: false,
      bytes: 0,
    });
  }
  if (placed.kind !== "called") return unplacedProblem("expand", spec, placed, requestId);
  const { result } = placed;
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
      return actionProblem("expand", spec, placed, result, requestId);
  }
}

/**
 * `POST /v1/refresh`: asks the named provider to bring its index up to date, for a caller whose
 * token grants ADMIN_SCOPE (docs/security.md); answers the provider's health.
 */
export async function runRefresh(
  host: ActionHost,
  ask: ActionAsk<RefreshAsk>,
): Promise<Envelope> {
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
  const target = await actionTarget(host, "refresh", ask.request.provider, caller, requestId);
  if (!target.ok) return target.envelope;
  const spec = target.spec;
  const placed = await withProvider(
    host,
    spec,
    ask,
    "refresh",
    (call) => host.client(spec).refresh(call),
  );
  if (placed.kind !== "called") return unplacedProblem("refresh", spec, placed, requestId);
  // Whatever it answered, the provider may have changed its index: its cached answers go.
  if (await host.invalidateCache?.(spec.name) === false) return notInvalidated(spec, requestId);
  const { result } = placed;
  switch (result.kind) {
    case "answer": {
      const { status, coverage, watermark, document_count, diagnostics } = result.answer;
      const health = host.recordHealth(spec.name, {
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
      return actionProblem("refresh", spec, placed, result, requestId);
  }
}

/**
 * The provider an expand or refresh names, if this caller may use it now; else the envelope
 * that says why, with the codes a search naming it would get.
 */
async function actionTarget(
  host: ActionHost,
  command: Command,
  name: string,
  caller: Caller,
  requestId: string,
): Promise<{ ok: true; spec: ProviderSpec } | { ok: false; envelope: Envelope }> {
  const refuse = (code: Parameters<typeof problemEnvelope>[1], message: string) => ({
    ok: false as const,
    envelope: problemEnvelope(command, code, requestId, message, "provider"),
  });
  const spec = host.config.manifest.providers.find((p) => p.name === name);
  if (spec === undefined) {
    const known = host.visibleTo(caller).map((p) => p.name);
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
  const reason = host.unavailable(spec);
  if (reason !== null) {
    return failed(`provider "${spec.name}" cannot be contacted: ${reason.replaceAll("_", " ")}`);
  }
  const versionProblem = host.versionProblem(spec);
  if (versionProblem !== null) return failed(versionProblem);
  const held = await host.suspensionOf(spec);
  if (held.state === "suspended") {
    const inMs = Math.max(0, Date.parse(held.until) - host.config.wallClock());
    return failed(`provider "${spec.name}" is suspended until ${held.until}`, inMs);
  }
  return { ok: true, spec };
}

/**
 * Calls a provider's action within its own timeout and concurrency gate (placed-call.ts), with
 * the provider token a search attempt of this caller would carry.
 */
async function withProvider<T extends { kind: string }>(
  host: ActionHost,
  spec: ProviderSpec,
  ask: ActionAsk<unknown>,
  action: OptionalAction,
  act: (call: ActionCall) => Promise<T>,
): Promise<Placed<T>> {
  const budgetMs = spec.timeout_seconds * 1000;
  const declared = host.declares(spec, action);
  const headersFor = host.tokenHeaders(ask.caller);
  const headers = headersFor ? await headersFor(spec, budgetMs) : {};
  return await placedCall({
    gate: host.gate(spec),
    budgetMs,
    caller: ask.signal,
    now: host.config.now,
    act: (signal) => act({ signal, requestId: ask.requestId, headers, declared }),
    complete: (result) => result.kind === "answer",
  });
}

/** What an expand or refresh that never reached the provider tells its caller. */
function unplacedProblem(
  command: "expand" | "refresh",
  spec: ProviderSpec,
  placed: Exclude<Placed<unknown>, { kind: "called" }>,
  requestId: string,
): Envelope {
  if (placed.kind === "caller_left") {
    return problemEnvelope(
      command,
      "provider_failed",
      requestId,
      `the caller went away while the ${command} waited for a place at provider "${spec.name}"`,
    );
  }
  const timeout = duration(spec.timeout_seconds * 1000);
  const why = placed.leftMs > 0
    ? `a place freed with only ${duration(placed.leftMs)} of its ${timeout} timeout left`
    : `no place freed within its ${timeout} timeout`;
  return problemEnvelope(
    command,
    "overloaded",
    requestId,
    `provider "${spec.name}" is at its max_concurrency (${spec.max_concurrency}): ${why}; the ${command} never reached it`,
    undefined,
    { retry_after_ms: PLACE_RETRY_AFTER_MS },
  );
}

/** What an expand or refresh that the provider did not answer tells its caller. */
function actionProblem(
  command: "expand" | "refresh",
  spec: ProviderSpec,
  placed: { timedOut: boolean; queued: Queued },
  result: Exclude<ActionResult<unknown>, { kind: "answer" }>,
  requestId: string,
): Envelope {
  if (result.kind === "unsupported") {
    return problemEnvelope(
      command,
      "action_unsupported",
      requestId,
      `provider "${spec.name}" does not implement ${command}: ${result.message}`,
      "provider",
    );
  }
  // The provider's timeout fired: named with its length and any share of it our queue took.
  if (placed.timedOut && result.outcome === "timeout") {
    const budget = duration(spec.timeout_seconds * 1000);
    const queue = placed.queued.waited
      ? `, of which ${
        duration(placed.queued.ms)
      } went waiting for a place under its max_concurrency of ${spec.max_concurrency}`
      : "";
    return problemEnvelope(
      command,
      "provider_failed",
      requestId,
      `provider "${spec.name}" did not answer within its timeout (${budget}${queue})`,
      undefined,
      { anyRetryable: true },
    );
  }
  return problemEnvelope(command, "provider_failed", requestId, result.message, undefined, {
    anyRetryable: result.retryable,
    ...(result.retry_after_ms === undefined ? {} : { retry_after_ms: result.retry_after_ms }),
  });
}

/** "40 ms" under a second, else "3 s", "1.5 s": seconds to a tenth, no trailing zero. */
function duration(ms: number): string {
  return ms < 1_000 ? `${Math.round(ms)} ms` : `${Math.round(ms / 100) / 10} s`;
}

/**
 * A refresh the provider answered whose cache invalidation did not reach the shared store: the
 * provider's old answers may still be served, so it is not done, and the same refresh may be.
 */
function notInvalidated(spec: ProviderSpec, requestId: string): Envelope {
  return problemEnvelope(
    "refresh",
    "state_unavailable",
    requestId,
    `the shared store could not be told to drop ${spec.name}'s cached answers, which may be served until their TTL; refresh it again`,
    "provider",
    { retry_after_ms: STORE_RETRY_MS },
  );
}
