/**
 * What the operator's monitoring reads (docs/deploy.md, "Observing it"): each request timed and
 * traced under its route's pattern, never its path, and `GET /metrics` in the Prometheus text
 * format. Labels and span attributes carry no query, locator, URL path, caller or token.
 */
import type { Context, Hono, MiddlewareHandler } from "hono";
import { ADMIN_SCOPE, METRICS_SCOPE } from "../core/caller.ts";
import type { MetricsPort, ServerSpan, Telemetry } from "../core/telemetry.ts";
import type { GatewayEnv } from "./caller-middleware.ts";
import { problemResponse } from "./respond.ts";
import { routeOf } from "./route-table.ts";

/** `http_route` of a request no route matched: a path is never a label. */
const UNMATCHED_ROUTE = "unmatched";

/** The server span of the request, for the routes that name what it was (an MCP tool call). */
export function serverSpanOf(c: Context<GatewayEnv>): ServerSpan | undefined {
  return c.get("span");
}

/** Times and traces every request; off (a pass-through) when the gateway has neither. */
export function observeRequests(telemetry: Telemetry, now: () => number): MiddlewareHandler {
  const { metrics, tracing } = telemetry;
  return async (c, next) => {
    if (metrics === null && tracing === null) return await next();
    const started = now();
    const route = routeOf(c.req.path) ?? UNMATCHED_ROUTE;
    const method = c.req.method;
    const span = tracing?.serve({ method, route, headers: c.req.raw.headers }) ?? null;
    if (span !== null) c.set("span", span);
    let status = 500;
    try {
      await next();
      status = c.res.status;
    } finally {
      metrics?.served(route, method, status, (now() - started) / 1000);
      span?.end(status);
    }
  };
}

/**
 * `GET /metrics` where the gateway keeps no registry (Workers push theirs over OTLP): a 404 before
 * any token is read, as /docs is when off, since there is nothing a token could unlock.
 */
export function registerMetricsOff(app: Hono<GatewayEnv>): void {
  app.get("/metrics", (c) =>
    problemResponse(
      "unknown",
      "not_found",
      c.get("requestId"),
      "this gateway keeps no metrics here (on Workers they go out over OTLP, docs/deploy.md)",
    ));
}

/** `GET /metrics`, after the caller is resolved: with TRACEFETCH_REQUIRE_AUTH, a scope it needs. */
export function registerMetricsRoute(
  app: Hono<GatewayEnv>,
  metrics: MetricsPort,
  requireAuth: boolean,
): void {
  app.get("/metrics", async (c) => {
    const requestId = c.get("requestId");
    const caller = c.get("caller");
    // Without TRACEFETCH_REQUIRE_AUTH the route is open, as /v1/status is.
    if (requireAuth && caller.kind === "token") {
      if (!caller.scopes.has(METRICS_SCOPE) && !caller.scopes.has(ADMIN_SCOPE)) {
        metrics.refused("forbidden");
        return problemResponse(
          "unknown",
          "forbidden",
          requestId,
          `the token grants neither ${METRICS_SCOPE} nor ${ADMIN_SCOPE}, which /metrics needs`,
        );
      }
    }
    const { contentType, text } = await metrics.exposition();
    return c.body(text, 200, { "content-type": contentType, "cache-control": "no-store" });
  });
}
