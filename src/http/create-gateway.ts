/**
 * createGateway(config): the Hono app every runtime serves. Routes are thin: they read input,
 * call the core and answer with an envelope.
 */
// The tiny preset (PatternRouter) keeps the worker under its size budget; our routes are few.
import { Hono } from "hono/tiny";
import type { Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { Command } from "../protocol/codes.ts";
import {
  MAX_REQUEST_BODY_BYTES,
  OVERLOADED_RETRY_AFTER_MS,
  REQUEST_ID_PATTERN,
} from "../protocol/limits.ts";
import type { ParsedSearchRequest } from "../protocol/search-request.ts";
import { executePlan } from "../core/search.ts";
import { planSearch } from "../core/plan.ts";
import { searchEnvelope, serverTiming } from "../envelope/search-envelope.ts";
import { streamFormat, streamSearch } from "./search-stream.ts";
import { type GatewayConfig, resolveConfig } from "./gateway-config.ts";
import { GatewayState, providerTokenHeaders } from "./gateway-state.ts";
import { callerMiddleware, type GatewayEnv } from "./caller-middleware.ts";
import { registerInfoRoutes } from "./info-routes.ts";
import { envelopeResponse, problemResponse } from "./respond.ts";
import { requestFromBody, requestFromQuery } from "./search-input.ts";

export function createGateway(config: GatewayConfig): Hono<GatewayEnv> {
  const state = new GatewayState(resolveConfig(config));
  const app = new Hono<GatewayEnv>();

  app.use("*", async (c, next) => {
    const incoming = c.req.header("x-request-id");
    c.set(
      "requestId",
      incoming && REQUEST_ID_PATTERN.test(incoming) ? incoming : crypto.randomUUID(),
    );
    await next();
  });
  app.use("*", callerMiddleware(state));

  const search = async (
    c: Context<GatewayEnv>,
    read: () => Promise<ParsedSearchRequest>,
    streamParam: string | null = null,
  ) => {
    const requestId = c.get("requestId");
    if (state.inflight >= state.config.maxInflight) {
      return problemResponse(
        "search",
        "overloaded",
        requestId,
        "the gateway is at its limit of searches in flight",
        undefined,
        { retry_after_ms: OVERLOADED_RETRY_AFTER_MS },
      );
    }
    state.inflight++;
    let handedToStream = false;
    try {
      const parsed = await read();
      if (!parsed.ok) {
        const { code, message, field } = parsed.problem;
        return problemResponse("search", code, requestId, message, field);
      }
      const caller = c.get("caller");
      const deps = state.depsFor(caller);
      const planned = planSearch(parsed.request, deps);
      if (!planned.ok) {
        const { code, message, field } = planned.problem;
        return problemResponse("search", code, requestId, message, field);
      }
      const format = streamFormat(c.req.header("accept"), streamParam);
      const job = {
        request: parsed.request,
        plan: planned.plan,
        deps,
        requestId,
        headersFor: providerTokenHeaders(state, caller, new URL(c.req.url).origin),
        heartbeatMs: state.config.heartbeatMs,
      };
      if (format !== null) {
        handedToStream = true;
        return streamSearch(c, format, job, () => state.inflight--);
      }
      const done = await executePlan(job.request, job.plan, deps, requestId, c.req.raw.signal, {
        ...(job.headersFor ? { headersFor: job.headersFor } : {}),
      });
      return envelopeResponse(searchEnvelope(done, requestId, parsed.request.view), {
        "server-timing": serverTiming(done),
      });
    } finally {
      if (!handedToStream) state.inflight--;
    }
  };

  app.post(
    "/v1/search",
    bodyLimit({
      maxSize: MAX_REQUEST_BODY_BYTES,
      onError: (c) =>
        problemResponse(
          "search",
          "body_too_large",
          c.get("requestId"),
          `the body exceeds ${MAX_REQUEST_BODY_BYTES} bytes`,
        ),
    }),
    (c) => search(c, () => requestFromBody(c.req.raw)),
  );
  app.get("/v1/search", (c) => {
    const url = new URL(c.req.url);
    const streamParam = url.searchParams.get("stream");
    url.searchParams.delete("stream");
    if (streamParam !== null && streamParam !== "ndjson" && streamParam !== "sse") {
      return problemResponse(
        "search",
        "invalid_field",
        c.get("requestId"),
        'stream must be "ndjson" or "sse"',
        "stream",
      );
    }
    return search(c, () => Promise.resolve(requestFromQuery(url)), streamParam);
  });

  registerInfoRoutes(app, state);

  const routes: Array<[string, Command]> = [
    ["/v1/search", "search"],
    ["/v1/providers", "providers"],
    ["/v1/status", "status"],
    ["/schemas/:file", "schema"],
    ["/.well-known/jwks.json", "unknown"],
  ];
  for (const [path, command] of routes) {
    app.all(
      path,
      (c) =>
        problemResponse(
          command,
          "method_not_allowed",
          c.get("requestId"),
          `${c.req.method} is not allowed on ${new URL(c.req.url).pathname}`,
          undefined,
        ),
    );
  }

  app.notFound((c) =>
    problemResponse(
      "unknown",
      "not_found",
      c.get("requestId") ?? crypto.randomUUID(),
      `no route ${c.req.method} ${new URL(c.req.url).pathname}`,
    )
  );

  app.onError((error, c) => {
    const requestId = c.get("requestId") ?? crypto.randomUUID();
    console.error(`[${requestId}] internal error:`, error);
    return problemResponse(
      "unknown",
      "internal_error",
      requestId,
      "the gateway hit an internal fault; report the request_id",
    );
  });

  return app;
}
