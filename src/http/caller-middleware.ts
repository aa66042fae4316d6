/**
 * Resolves who is calling before any route runs (docs/security.md, "Tokens in: callers"). A presented token
 * that fails verification is refused, never downgraded to anonymous; keys that cannot be fetched
 * fail closed (503 auth_unavailable) only for a request that presented a token or when every route
 * requires one.
 */
import type { Context, MiddlewareHandler } from "hono";
import type { Command } from "../protocol/codes.ts";
import { ANONYMOUS, type Caller } from "../core/caller.ts";
import type { GatewayState } from "../gateway/gateway-state.ts";
import { CALLER_REFUSAL_CODES, type MetricsPort, type ServerSpan } from "../core/telemetry.ts";
import { problemResponse } from "./respond.ts";
import { ROUTES } from "./route-table.ts";

/**
 * What the routes read on the context: the request id, the caller, and the client address
 * (client-address.ts), whom the request counts against where callers are bounded one by one.
 */
export type GatewayEnv = {
  Variables: {
    requestId: string;
    caller: Caller;
    clientAddress: string;
    /** The request's server span, when the gateway traces (observe-routes.ts). */
    span?: ServerSpan | undefined;
    /** The request's URL, once one of its readers parsed it (requestUrl). */
    url?: URL | undefined;
  };
};

/** The request's URL, parsed once per request: several middlewares and the route each read it. */
export function requestUrl(c: Context<GatewayEnv>): URL {
  let url = c.get("url");
  if (url === undefined) {
    url = new URL(c.req.url);
    c.set("url", url);
  }
  return url;
}

/** Routes open to anyone even with TRACEFETCH_REQUIRE_AUTH: liveness and the keys providers need. */
const OPEN_ROUTES = new Set(["/v1/status", "/.well-known/jwks.json"]);

/** The command a path's envelopes carry: its route's (route-table.ts), else `unknown`. */
export function commandOf(pathname: string): Command {
  const route = ROUTES.find(({ pattern }) =>
    pattern.endsWith("/:file")
      ? pathname.startsWith(pattern.slice(0, -":file".length))
      : pathname === pattern
  );
  return route?.command ?? "unknown";
}

export function callerMiddleware(state: GatewayState): MiddlewareHandler<GatewayEnv> {
  const { verifier, requireAuth } = state.config.auth;
  const metrics = state.config.telemetry.metrics;
  return async (c, next) => {
    const header = c.req.header("authorization");
    if (header === undefined) {
      if (requireAuth && !OPEN_ROUTES.has(requestUrl(c).pathname)) {
        return refusal(c, metrics, "unauthorized", "this gateway requires a bearer token");
      }
      c.set("caller", ANONYMOUS);
      return await next();
    }
    const match = /^Bearer ([^\s]+)$/i.exec(header.trim());
    if (match === null) {
      return refusal(c, metrics, "token_invalid", 'send "Authorization: Bearer <token>"');
    }
    if (verifier === null) {
      return refusal(
        c,
        metrics,
        "token_invalid",
        "this gateway accepts no tokens (none are configured)",
      );
    }
    const verified = await verifier(match[1] as string);
    if (!verified.ok) return refusal(c, metrics, verified.code, verified.message);
    c.set("caller", verified.caller);
    return await next();
  };
}

/**
 * A request refused for its caller, counted when the metrics count that code. Its route's command
 * is looked up only here: an admitted request never needs it.
 */
function refusal(
  c: Context<GatewayEnv>,
  metrics: MetricsPort | null,
  code: Parameters<typeof problemResponse>[1],
  message: string,
): Response {
  if (CALLER_REFUSAL_CODES.has(code)) metrics?.refused(code);
  return problemResponse(commandOf(requestUrl(c).pathname), code, c.get("requestId"), message);
}
