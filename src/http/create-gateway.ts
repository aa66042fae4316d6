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
import { runSearch } from "../core/search.ts";
import { buildEnvelope, MINING_DISABLED } from "../envelope/build-envelope.ts";
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

  const search = async (c: Context<Env>, read: () => Promise<ParsedSearchRequest>) => {
    const requestId = c.get("requestId");
    if (state.inflight >= state.config.maxInflight) {
      return problemResponse(
        "search",
        "overloaded",
        requestId,
        "the gateway is at its limit of searches in flight",
        undefined,
        {
          retry_after_ms: OVERLOADED_RETRY_AFTER_MS,
        },
      );
    }
    state.inflight++;
    try {
      const parsed = await read();
      if (!parsed.ok) {
        const { code, message, field } = parsed.problem;
        return problemResponse("search", code, requestId, message, field);
      }
      const outcome = await runSearch(parsed.request, state.deps, requestId, c.req.raw.signal);
      if (!outcome.ok) {
        const { code, message, field } = outcome.problem;
        return problemResponse("search", code, requestId, message, field);
      }
      const result = outcome.result;
      if (parsed.request.view === "merged") delete result.candidates;
      const envelope = buildEnvelope("search", outcome.code, requestId, {
        result,
        mining: MINING_DISABLED,
        anyRetryable: outcome.retryable,
        ...(outcome.code === "all_providers_failed"
          ? { error: { message: "every selected provider failed; see result.candidates" } }
          : {}),
      });
      const timing = (outcome.result.candidates ?? [])
        .map((r) => `p_${r.provider};dur=${r.latency_ms};desc="${r.outcome}"`)
        .concat(`fusion;dur=${outcome.timings.fusion_ms.toFixed(2)}`)
        .join(", ");
      return envelopeResponse(envelope, { "server-timing": timing });
    } finally {
      state.inflight--;
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
  app.get(
    "/v1/search",
    (c) => search(c, () => Promise.resolve(requestFromQuery(new URL(c.req.url)))),
  );

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
