/**
 * Caller limits (docs/envelope.md, "Caller limits"): every search and every expand a caller asks
 * for is logged in the shared state, with the cost its plan declares, before anything answers it
 * (the providers, the cache, a flight it joins); beyond the manifest's `caller_limits` it is
 * refused with 429 `rate_limited`.
 *
 * Invariants:
 * - A caller is a token's `sub`, else the client address (src/http/client-address.ts): behind
 *   TRACEFETCH_TRUSTED_PROXIES only, never a header a caller could choose.
 * - A caller reaches a shared store only as an HMAC (src/state/guarded-state.ts).
 * - Without `caller_limits` nothing is logged: a search waits for no store at all.
 */
import type { Command } from "../protocol/codes.ts";
import type { Envelope } from "../protocol/envelope-schema.ts";
import { CALLER_COST_WINDOW_MS, CALLER_SEARCH_WINDOW_MS } from "../protocol/limits.ts";
import type { Manifest, ProviderSpec } from "../protocol/manifest-schema.ts";
import type { LogAsk, LogVerdict } from "../core/search-log.ts";
import { problemEnvelope } from "../envelope/build-envelope.ts";
import type { Caller } from "../core/caller.ts";
import type { SharedState } from "../state/shared-state.ts";

/** Who asks, as a route tells the gateway. */
export type CallerAsk = {
  caller: Caller;
  /** The client address, whom an anonymous caller counts as. */
  client: string;
  requestId: string;
};

/** Whom a search counts against: a token's subject, else the client; never one as the other. */
export function callerKey(caller: Caller, client: string): string {
  return caller.kind === "token" ? `sub:${caller.subject}` : `client:${client}`;
}

/**
 * Logs one search of this caller, which asks `providers` (its plan's, or an expand's one): null
 * once admitted, or when no limit is set; else the 429 to answer. It costs what the manifest
 * declares of those providers (`cost_micros`).
 */
export async function countSearch(
  config: { manifest: Manifest; state: SharedState },
  ask: CallerAsk,
  command: Command,
  providers: readonly ProviderSpec[],
  /** What is left of the search's budget: a shared store is waited for no longer. */
  budgetMs?: number,
): Promise<Envelope | null> {
  const { searches_per_minute: perMinute, cost_micros_per_day: perDay } =
    config.manifest.caller_limits ?? {};
  if (perMinute === undefined && perDay === undefined) return null;
  const micros = providers.reduce((sum, spec) => sum + spec.cost_micros, 0);
  const log: LogAsk = {};
  if (perMinute !== undefined) {
    log.searches = { limit: perMinute, windowMs: CALLER_SEARCH_WINDOW_MS };
  }
  if (perDay !== undefined) log.cost = { limit: perDay, windowMs: CALLER_COST_WINDOW_MS, micros };
  const key = callerKey(ask.caller, ask.client);
  const verdict = await config.state.logSearch(key, log, budgetMs);
  if (verdict.admitted) return null;
  // Whole milliseconds, never 0: a client told to come back at once would only be refused again.
  const wait = Math.max(1, Math.ceil(verdict.retryAfterMs));
  const message = `${
    limitMet(verdict, perMinute, perDay, micros)
  }; other callers are not affected; retry after ${wait} ms`;
  return problemEnvelope(command, "rate_limited", ask.requestId, message, undefined, {
    retry_after_ms: wait,
  });
}

/** The caller's own limit a refused search met, in words. */
function limitMet(
  verdict: Extract<LogVerdict, { admitted: false }>,
  perMinute: number | undefined,
  perDay: number | undefined,
  micros: number,
): string {
  return verdict.limit === "searches_per_minute"
    ? `you reached your own limit of ${perMinute} searches a minute (caller_limits.searches_per_minute, expands and fetches included)`
    : `this search (${micros} micros) would take you past your own limit of ${perDay} micros a day (caller_limits.cost_micros_per_day)`;
}
