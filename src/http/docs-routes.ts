/**
 * The routes that describe the HTTP API itself: `/openapi.json` (the OpenAPI document generated at
 * build time into schemas/openapi.json, raw) and the API reference at `/docs`, with the viewer
 * script it runs served here too, never from another origin. Each loads its module on first use, so
 * the Worker ships the document and the page as extra modules. They are registered before the
 * caller is resolved: they carry no data, and a browser opening /docs sends no token.
 */
import type { Context, Hono } from "hono";
import type { ApiDocsViewer } from "../config/gateway-config.ts";
import type { GatewayEnv } from "./caller-middleware.ts";
import { DOCUMENT_CACHE } from "./info-routes.ts";
import { NO_SNIFF, problemResponse } from "./respond.ts";
import { API_DOCS_VIEWER_PATH } from "./route-table.ts";

const OFF =
  "the API reference at /docs is off on this gateway; TRACEFETCH_API_DOCS=1 turns it on " +
  "(on Workers, set it when building the worker too: TRACEFETCH_API_DOCS=1 npm run build:worker; " +
  "docs/deploy.md); the OpenAPI document is at /openapi.json";
const NOT_INSTALLED = "the API reference viewer (the @scalar/api-reference package) is not " +
  "installed where this gateway was started, or this worker was built without it " +
  "(TRACEFETCH_API_DOCS=1 npm run build:worker bundles it; docs/deploy.md); the OpenAPI " +
  "document is at /openapi.json";

export function registerDocsRoutes(app: Hono<GatewayEnv>, viewer: ApiDocsViewer | null): void {
  app.get("/openapi.json", async (c) => {
    const { OPENAPI_TEXT } = await import("./openapi-document.ts");
    return c.body(OPENAPI_TEXT, 200, {
      "content-type": "application/json",
      "cache-control": DOCUMENT_CACHE,
      ...NO_SNIFF,
    });
  });

  /** The viewer's script, or the 404 that says why there is none. */
  const script = async (c: Context<GatewayEnv>): Promise<string | Response> => {
    const requestId = c.get("requestId");
    if (viewer === null) return problemResponse("unknown", "not_found", requestId, OFF);
    return await viewer() ?? problemResponse("unknown", "not_found", requestId, NOT_INSTALLED);
  };

  app.get("/docs", async (c) => {
    // The page is useless without its script: a gateway that cannot serve it says so instead.
    const found = await script(c);
    if (found instanceof Response) return found;
    const { apiDocsPage } = await import("./api-docs-page.ts");
    return await apiDocsPage(c, DOCUMENT_CACHE);
  });

  app.get(API_DOCS_VIEWER_PATH, async (c) => {
    const found = await script(c);
    if (found instanceof Response) return found;
    return c.body(found, 200, {
      "content-type": "text/javascript; charset=utf-8",
      "cache-control": DOCUMENT_CACHE,
      "x-content-type-options": "nosniff",
    });
  });
}
