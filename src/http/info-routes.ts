/**
 * The routes that describe the gateway: the index of routes, providers and status (as the caller
 * may see them), the JSON Schemas, and the public keys providers verify gateway tokens with.
 */
import type { Hono } from "hono";
import type {
  Envelope,
  MiningStatus,
  ProviderListing,
  TracesStatus,
} from "../protocol/envelope-schema.ts";
import type { Caller } from "../core/caller.ts";
import { buildEnvelope } from "../envelope/build-envelope.ts";
import type { GatewayEnv } from "./caller-middleware.ts";
import type { GatewayState } from "../gateway/gateway-state.ts";
import { VERSION } from "../protocol/version.ts";
import { envelopeResponse, NO_SNIFF, problemResponse } from "./respond.ts";
import { DOCS, ROUTES } from "./route-table.ts";
import { isSchemaName, SCHEMA_NAMES } from "../protocol/schema-names.ts";

/** `/v1/status`'s mining without a sink. */
const MINING_OFF: MiningStatus = {
  state: "disabled",
  configured: false,
  sink: null,
  health: [],
  queued: 0,
  dropped: 0,
  written: 0,
};

/** `/v1/status`'s traces without an OTLP endpoint. */
const TRACES_OFF: TracesStatus = { state: "off", queued: 0, dropped: 0, exported: 0, failed: 0 };

/** Documents that change only with a deploy; a short cache spares repeated fetches. */
export const DOCUMENT_CACHE = "public, max-age=300";

/** `GET /v1/providers`'s envelope (the MCP `providers` tool answers it too). */
export function providersEnvelope(
  state: GatewayState,
  caller: Caller,
  requestId: string,
): Envelope {
  const { manifest } = state.config;
  const providers: ProviderListing[] = state.visibleTo(caller).map((p) => ({
    name: p.name,
    scope: p.scope,
    source_class: p.source_class,
    sensitivity: p.sensitivity,
    isolated: p.isolated,
    cost_micros: p.cost_micros,
    transport: p.transport,
  }));
  return buildEnvelope("providers", "ok", requestId, {
    result: { providers, tiers: manifest.tiers, default_tier: manifest.default_tier },
  });
}

/** `GET /v1/status`'s envelope (the MCP `status` tool answers it too). */
export async function statusEnvelope(
  state: GatewayState,
  caller: Caller,
  requestId: string,
): Promise<Envelope> {
  return buildEnvelope("status", "ok", requestId, {
    result: {
      service: "tracefetch-edge",
      version: VERSION,
      providers: await state.providerStates(caller, false),
      searches_in_flight: state.searchesInFlight,
      max_inflight: state.config.maxInflight,
      max_providers: state.config.maxProviders,
      mining: state.mining?.status() ?? MINING_OFF,
      shared_state: state.config.state.status(),
      traces: state.config.telemetry.tracing === null
        ? TRACES_OFF
        : { state: "exporting", ...state.config.telemetry.tracing.status() },
    },
  });
}

export function registerInfoRoutes(app: Hono<GatewayEnv>, state: GatewayState): void {
  app.get("/", (c) => {
    // A request that prefers HTML got the page (page-route.ts) before reaching here.
    return envelopeResponse(buildEnvelope("index", "ok", c.get("requestId"), {
      result: {
        name: "tracefetch-edge",
        version: VERSION,
        routes: ROUTES.map((r) => ({
          path: r.path,
          methods: r.allow.split(", "),
          answers: r.answers,
        })),
        schemas: SCHEMA_NAMES.map((name) => `/schemas/${name}.json`),
        docs: [...DOCS],
      },
    }));
  });

  app.get(
    "/v1/providers",
    (c) => envelopeResponse(providersEnvelope(state, c.get("caller"), c.get("requestId"))),
  );

  app.get(
    "/v1/status",
    async (c) =>
      envelopeResponse(
        await statusEnvelope(state, c.get("caller"), c.get("requestId")),
      ),
  );

  app.get(
    "/v1/doctor",
    async (c) =>
      envelopeResponse(buildEnvelope("doctor", "ok", c.get("requestId"), {
        result: {
          providers: await state.providerStates(c.get("caller"), true),
          shared_state: state.config.state.status(),
        },
      })),
  );

  app.get("/schemas/:file", async (c) => {
    const file = c.req.param("file");
    const name = file.replace(/\.json$/, "");
    if (!file.endsWith(".json") || !isSchemaName(name)) {
      const known = SCHEMA_NAMES.map((n) => `${n}.json`).join(", ");
      return problemResponse(
        "schema",
        "not_found",
        c.get("requestId"),
        `there is no schema "${file}"; try ${known}`,
      );
    }
    // A module of its own on the Worker (docs/deploy.md): loaded on the first schema asked for.
    const { SCHEMA_DOCUMENTS } = await import("../protocol/schema-documents.ts");
    return c.json(SCHEMA_DOCUMENTS[name], 200, { "cache-control": DOCUMENT_CACHE, ...NO_SNIFF });
  });

  app.get("/.well-known/jwks.json", (c) => {
    const signer = state.config.auth.signer;
    if (!signer) {
      return problemResponse(
        "unknown",
        "not_found",
        c.get("requestId"),
        "this gateway has no signing key (TRACEFETCH_SIGNING_JWK)",
      );
    }
    return c.json(signer.publicJwks, 200, { "cache-control": DOCUMENT_CACHE, ...NO_SNIFF });
  });
}
