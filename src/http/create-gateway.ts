/**
 * createGateway(settings, ports): the Hono app every runtime serves, from the Settings its
 * composition root parsed once and the runtime's ports. Routes are thin: they read input, hand it
 * to the gateway and answer with its envelope.
 */
// The tiny preset (PatternRouter) keeps the worker under its size budget; our routes are few.
import { Hono } from "hono/tiny";
import type { Context } from "hono";
import type { Command } from "../protocol/codes.ts";
import { REQUEST_ID_PATTERN } from "../protocol/limits.ts";
import type { ParsedSearchRequest } from "../protocol/search-request.ts";
import { serverTiming } from "../envelope/search-envelope.ts";
import { problemEnvelope } from "../envelope/build-envelope.ts";
import { type Ports, resolveConfig } from "../config/gateway-config.ts";
import type { Settings } from "../config/settings.ts";
import { GatewayState } from "../gateway/gateway-state.ts";
import type { ActionAsk } from "../gateway/action-run.ts";
import { streamFormat, streamSearch } from "./search-stream.ts";
import { callerMiddleware, type GatewayEnv, requestUrl } from "./caller-middleware.ts";
import { clientAddressMiddleware } from "./client-address.ts";
import { BodiesInRead, bodyReader } from "./request-bodies.ts";
import { registerInfoRoutes } from "./info-routes.ts";
import { registerPage } from "./page-route.ts";
import { registerDocsRoutes } from "./docs-routes.ts";
import { prettyJson } from "./pretty-json.ts";
import { afterAnswer } from "./after-answer.ts";
import { ROUTES } from "./route-table.ts";
import { envelopeResponse, problemResponse } from "./respond.ts";
import { checkMediaType, requestFromBytes, requestFromQuery } from "./search-input.ts";
import type { ParsedAction } from "../protocol/action-request.ts";
import type { Envelope } from "../protocol/envelope-schema.ts";
import { decodeUtf8 } from "../io/bounded-reader.ts";
import { lazy } from "../core/lazy-module.ts";
import type { FetchAsk, Parsed } from "../protocol/fetch-request.ts";
import type { EvidencePorts } from "./fetch-route.ts";
import { observeRequests, registerMetricsOff, registerMetricsRoute } from "./observe-routes.ts";

/** 405 with the Allow header RFC 9110 section 15.5.6 requires. */
function notAllowed(c: Context<GatewayEnv>, command: Command, allow: string): Response {
  const path = requestUrl(c).pathname;
  return envelopeResponse(
    problemEnvelope(
      command,
      "method_not_allowed",
      c.get("requestId"),
      `${c.req.raw.method} is not allowed on ${path}; use ${allow}`,
    ),
    { allow },
  );
}

/** The expand and refresh parsers, loaded with the first of either: searches never need them. */
const loadActionRequests = lazy(() => import("../protocol/action-request.ts"));

/** The fetch and verify routes (fetch-route.ts), loaded with the first of either. */
const loadFetchRoute = lazy(() => import("./fetch-route.ts"));

/** The crawl route (crawl-route.ts), loaded with the first crawl. */
const loadCrawlRoute = lazy(() => import("./crawl-route.ts"));

/** The MCP endpoint (docs/mcp.md), loaded with the first `/mcp` request: its own module on Workers. */
const loadMcp = lazy(() => import("./mcp/mcp-endpoint.ts"));

/** The runtime's ports, and how it reaches pages (src/evidence); without that, fetch is off. */
export type GatewayPorts = Ports & { evidence?: EvidencePorts | undefined };

export function createGateway(settings: Settings, ports: GatewayPorts = {}): Hono<GatewayEnv> {
  const state = new GatewayState(resolveConfig(settings, ports));
  const evidence = ports.evidence ?? null;
  const app = new Hono<GatewayEnv>();
  const { telemetry } = state.config;
  telemetry.metrics?.watch(state.gauges());

  app.use("*", async (c, next) => {
    const incoming = c.req.header("x-request-id");
    c.set(
      "requestId",
      incoming && REQUEST_ID_PATTERN.test(incoming) ? incoming : crypto.randomUUID(),
    );
    await next();
  });
  app.use("*", observeRequests(telemetry, state.config.now));
  // Before any route: whom the request counts against where callers are bounded one by one.
  app.use("*", clientAddressMiddleware(state.config));
  // Around everything after the request id, so a 404, a 405 or a refused token is indented too.
  app.use("*", prettyJson());
  app.use("*", async (c, next) => {
    const path = requestUrl(c).pathname;
    // One spelling per route: `/v1/search/` is not `/v1/search`.
    if (path.length > 1 && path.endsWith("/")) {
      return problemResponse("unknown", "not_found", c.get("requestId"), `no route ${path}`);
    }
    // Hono answers HEAD with its GET route; a HEAD search would contact every provider for nothing.
    if (c.req.raw.method === "HEAD" && path === "/v1/search") {
      return notAllowed(c, "search", "GET, POST");
    }
    // Nor a HEAD fetch reach out to a page.
    if (c.req.raw.method === "HEAD" && path === "/v1/fetch") {
      return notAllowed(c, "fetch", "GET, POST");
    }
    await next();
  });
  // Before the caller is resolved: the page carries no data, and with TRACEFETCH_REQUIRE_AUTH a
  // person still needs it to paste a token into.
  registerPage(app);
  // MCP's guard against DNS rebinding runs before a token is read (mcp-endpoint.ts).
  app.use("/mcp", async (c, next) => {
    const refused = (await loadMcp()).originRefusal(
      c.req.header("origin"),
      state.config,
      c.get("requestId"),
    );
    return refused ?? await next();
  });
  // Before the caller is resolved: they describe the API, not its data, and a browser opening
  // /docs sends no token.
  registerDocsRoutes(app, ports.apiDocs ?? null);
  if (telemetry.metrics?.scraped !== true) registerMetricsOff(app);
  app.use("*", callerMiddleware(state));

  const { maxBodiesInRead, maxBodyBytesInRead, bodyTimeoutMs } = state.config;
  const readBody = bodyReader(new BodiesInRead(maxBodiesInRead, maxBodyBytesInRead), bodyTimeoutMs);

  /** Hands a read request to the gateway, which plans it and only then takes an in-flight slot. */
  const search = async (
    c: Context<GatewayEnv>,
    parsed: ParsedSearchRequest,
    streamParam: string | null = null,
  ) => {
    const requestId = c.get("requestId");
    if (!parsed.ok) {
      const { code, message, field } = parsed.problem;
      return problemResponse("search", code, requestId, message, field);
    }
    const span = c.get("span");
    span?.trace.query(parsed.request.query);
    const admission = await state.admit({
      request: parsed.request,
      caller: c.get("caller"),
      client: c.get("clientAddress"),
      requestId,
      trace: span?.trace,
    });
    if (!admission.ok) return envelopeResponse(admission.envelope);
    const later = afterAnswer(c);
    const format = streamFormat(c.req.header("accept"), streamParam);
    if (format !== null) {
      return streamSearch(c, format, admission.search, requestId, state.config.heartbeatMs, later);
    }
    return await admission.search.run(
      { signal: c.req.raw.signal, later },
      ({ completed, envelope }) =>
        envelopeResponse(envelope, { "server-timing": serverTiming(completed) }),
    );
  };

  app.post("/v1/search", async (c) => {
    const media = checkMediaType(c.req.header("content-type"));
    if (!media.ok) return search(c, media);
    const bytes = await readBody(c, "search");
    if (bytes instanceof Response) return bytes;
    return search(c, requestFromBytes(bytes));
  });

  /** A provider action's route: the body read and parsed strictly, then handed to the gateway. */
  const actionRoute = <T>(
    command: "expand" | "refresh",
    parse: (text: string) => Promise<ParsedAction<T>>,
    run: (ask: ActionAsk<T>) => Promise<Envelope>,
  ) =>
  async (c: Context<GatewayEnv>) => {
    const requestId = c.get("requestId");
    const media = checkMediaType(c.req.header("content-type"));
    if (!media.ok) {
      return problemResponse(command, media.problem.code, requestId, media.problem.message);
    }
    const bytes = await readBody(c, command);
    if (bytes instanceof Response) return bytes;
    const text = decodeUtf8(bytes);
    const parsed = text === null
      ? {
        ok: false as const,
        problem: { code: "invalid_utf8" as const, message: "the body is not valid UTF-8" },
      }
      : await parse(text);
    if (!parsed.ok) {
      const { code, message, field } = parsed.problem;
      return problemResponse(command, code, requestId, message, field);
    }
    return envelopeResponse(
      await run({
        request: parsed.request,
        caller: c.get("caller"),
        client: c.get("clientAddress"),
        requestId,
        signal: c.req.raw.signal,
        trace: c.get("span")?.trace,
      }),
    );
  };

  app.post(
    "/v1/expand",
    actionRoute(
      "expand",
      async (text) => (await loadActionRequests()).parseExpandRequestText(text),
      (ask) => state.expand(ask),
    ),
  );
  app.post(
    "/v1/refresh",
    actionRoute(
      "refresh",
      async (text) => (await loadActionRequests()).parseRefreshRequestText(text),
      (ask) => state.refresh(ask),
    ),
  );
  /** A fetch read from either form: answered by fetch-route.ts once admitted. */
  const fetchPage = async (c: Context<GatewayEnv>, parsed: Parsed<FetchAsk>) => {
    const requestId = c.get("requestId");
    if (!parsed.ok) {
      const { code, message, field } = parsed.problem;
      return problemResponse("fetch", code, requestId, message, field);
    }
    const { answerFetch } = await loadFetchRoute();
    return envelopeResponse(
      await answerFetch(state, evidence, {
        request: parsed.request,
        caller: c.get("caller"),
        client: c.get("clientAddress"),
        requestId,
        signal: c.req.raw.signal,
        later: afterAnswer(c),
        trace: c.get("span")?.trace,
      }),
    );
  };
  app.post("/v1/fetch", async (c) => {
    const read = await jsonBody(c, "fetch");
    if (read instanceof Response) return read;
    return fetchPage(c, (await loadFetchRoute()).parseFetchRequestText(read));
  });
  app.get(
    "/v1/fetch",
    async (c) => fetchPage(c, (await loadFetchRoute()).fetchRequestFromQuery(requestUrl(c))),
  );
  app.post("/v1/verify", async (c) => {
    const requestId = c.get("requestId");
    const read = await jsonBody(c, "verify");
    if (read instanceof Response) return read;
    const { answerVerify, parseVerifyRequestText } = await loadFetchRoute();
    const parsed = parseVerifyRequestText(read);
    if (!parsed.ok) {
      const { code, message, field } = parsed.problem;
      return problemResponse("verify", code, requestId, message, field);
    }
    return envelopeResponse(await answerVerify(state, parsed.request, requestId));
  });

  app.post("/v1/crawl", async (c) => {
    const requestId = c.get("requestId");
    const read = await jsonBody(c, "crawl");
    if (read instanceof Response) return read;
    const { answerCrawl, parseCrawlRequestText } = await loadCrawlRoute();
    const parsed = parseCrawlRequestText(read);
    if (!parsed.ok) {
      const { code, message, field } = parsed.problem;
      return problemResponse("crawl", code, requestId, message, field);
    }
    return await answerCrawl(c, state, evidence, {
      request: parsed.request,
      // NDJSON unless the caller asks for Server-Sent Events.
      format: streamFormat(c.req.header("accept"), null) === "sse" ? "sse" : "ndjson",
      caller: c.get("caller"),
      client: c.get("clientAddress"),
      requestId,
      signal: c.req.raw.signal,
      later: afterAnswer(c),
    });
  });

  /** A JSON body as text, or the answer refusing it (media type, size, deadline, UTF-8). */
  async function jsonBody(c: Context<GatewayEnv>, command: Command): Promise<string | Response> {
    const requestId = c.get("requestId");
    const media = checkMediaType(c.req.header("content-type"));
    if (!media.ok) {
      return problemResponse(command, media.problem.code, requestId, media.problem.message);
    }
    const bytes = await readBody(c, command);
    if (bytes instanceof Response) return bytes;
    const text = decodeUtf8(bytes);
    return text ??
      problemResponse(command, "invalid_utf8", requestId, "the body is not valid UTF-8");
  }

  app.post("/mcp", async (c) => {
    const bytes = await readBody(c, "unknown");
    if (bytes instanceof Response) return bytes;
    return (await loadMcp()).answerMcp(c, state, bytes, evidence);
  });
  app.get("/v1/search", (c) => {
    const read = requestFromQuery(requestUrl(c));
    return search(c, read, read.ok ? read.stream : null);
  });

  registerInfoRoutes(app, state);
  if (telemetry.metrics?.scraped === true) {
    registerMetricsRoute(app, telemetry.metrics, state.config.auth.requireAuth);
  }

  for (const { pattern, command, allow } of ROUTES) {
    app.all(pattern, (c) => notAllowed(c, command, allow));
  }

  app.notFound((c) =>
    problemResponse(
      "unknown",
      "not_found",
      c.get("requestId") ?? crypto.randomUUID(),
      `no route ${c.req.method} ${requestUrl(c).pathname}`,
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
