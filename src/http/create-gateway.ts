/**
 * createGateway(config): the Hono app every runtime serves. Routes are thin: they read input,
 * call the core and answer with an envelope.
 */
import { Hono } from "hono";
import type { Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { Command } from "../protocol/codes.ts";
import {
  MAX_REQUEST_BODY_BYTES,
  OVERLOADED_RETRY_AFTER_MS,
  REQUEST_ID_PATTERN,
} from "../protocol/limits.ts";
import type { ParsedSearchRequest } from "../protocol/search-request.ts";
import type { ProviderListing } from "../protocol/envelope-schema.ts";
import { executePlan } from "../core/search.ts";
import { planSearch } from "../core/plan.ts";
import { searchEnvelope, serverTiming } from "../envelope/search-envelope.ts";
import { streamFormat, streamSearch } from "./search-stream.ts";
import { buildEnvelope } from "../envelope/build-envelope.ts";
import { type GatewayConfig, resolveConfig } from "./gateway-config.ts";
import { GatewayState } from "./gateway-state.ts";
import { envelopeResponse, problemResponse } from "./respond.ts";
import { requestFromBody, requestFromQuery } from "./search-input.ts";
import { SCHEMA_DOCUMENTS } from "./schema-documents.ts";

type Env = { Variables: { requestId: string } };

export function createGateway(config: GatewayConfig): Hono<Env> {
  const state = new GatewayState(resolveConfig(config));
  const { manifest } = state.config;
  const app = new Hono<Env>();

  app.use("*", async (c, next) => {
    const incoming = c.req.header("x-request-id");
    c.set(
      "requestId",
      incoming && REQUEST_ID_PATTERN.test(incoming) ? incoming : crypto.randomUUID(),
    );
    await next();
  });

  const search = async (
    c: Context<Env>,
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
      const planned = planSearch(parsed.request, state.deps);
      if (!planned.ok) {
        const { code, message, field } = planned.problem;
        return problemResponse("search", code, requestId, message, field);
      }
      const format = streamFormat(c.req.header("accept"), streamParam);
      const job = {
        request: parsed.request,
        plan: planned.plan,
        deps: state.deps,
        requestId,
        heartbeatMs: state.config.heartbeatMs,
      };
      if (format !== null) {
        handedToStream = true;
        return streamSearch(c, format, job, () => state.inflight--);
      }
      const done = await executePlan(job.request, job.plan, job.deps, requestId, c.req.raw.signal);
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

  app.get("/v1/providers", (c) => {
    const providers: ProviderListing[] = manifest.providers
      .filter((p) => p.sensitivity === "public")
      .map((p) => ({
        name: p.name,
        scope: p.scope,
        source_class: p.source_class,
        sensitivity: p.sensitivity,
        isolated: p.isolated,
        cost_micros: p.cost_micros,
        transport: p.transport,
      }));
    return envelopeResponse(buildEnvelope("providers", "ok", c.get("requestId"), {
      result: { providers, tiers: manifest.tiers, default_tier: manifest.default_tier },
    }));
  });

  app.get("/v1/status", (c) =>
    envelopeResponse(buildEnvelope("status", "ok", c.get("requestId"), {
      result: {
        service: "tracefetch-edge",
        version: state.config.version,
        providers: manifest.providers
          .filter((p) => p.sensitivity === "public")
          .map((p) => {
            const reason = state.unavailable(p);
            return {
              name: p.name,
              state: reason === null
                ? "ready" as const
                : reason === "disabled"
                ? "disabled" as const
                : "not_configured" as const,
            };
          }),
        searches_in_flight: state.inflight,
        max_inflight: state.config.maxInflight,
        max_providers: state.config.maxProviders,
      },
    })));

  app.get("/schemas/:file", (c) => {
    const name = c.req.param("file").replace(/\.json$/, "");
    const document = Object.hasOwn(SCHEMA_DOCUMENTS, name) ? SCHEMA_DOCUMENTS[name] : undefined;
    if (!c.req.param("file").endsWith(".json") || document === undefined) {
      return problemResponse(
        "schema",
        "not_found",
        c.get("requestId"),
        `there is no schema "${c.req.param("file")}"; try ${
          Object.keys(SCHEMA_DOCUMENTS).map((n) => `${n}.json`).join(", ")
        }`,
      );
    }
    return c.json(document, 200, { "cache-control": "public, max-age=300" });
  });

  const routes: Array<[string, Command]> = [
    ["/v1/search", "search"],
    ["/v1/providers", "providers"],
    ["/v1/status", "status"],
    ["/schemas/:file", "schema"],
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
