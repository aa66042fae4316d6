/**
 * The routes that describe the HTTP API itself: `/openapi.json` (the OpenAPI document generated at
 * build time into schemas/openapi.json, raw) and the API reference at `/docs`, with the viewer
 * script it runs served here too, never from another origin. Each loads its module on first use, so
 * the Worker ships the document and the page as extra modules. They are registered before the
 * caller is resolved: they carry no data, and a browser opening /docs sends no token.
 */
import type { Hono } from "hono";
import type { ApiDocsViewer } from "../config/gateway-config.ts";
import type { GatewayEnv } from "./caller-middleware.ts";
import { DOCUMENT_CACHE } from "./info-routes.ts";
import { NO_SNIFF } from "./respond.ts";
import { API_DOCS_VIEWER_PATH } from "./route-table.ts";
import { lazy } from "../core/lazy-module.ts";

/** The answers of /docs and its script, loaded with the first of them (api-docs-answers.ts). */
const loadAnswers = lazy(() => import("./api-docs-answers.ts"));

export function registerDocsRoutes(app: Hono<GatewayEnv>, viewer: ApiDocsViewer | null): void {
  app.get("/openapi.json", async (c) => {
    const { OPENAPI_TEXT } = await import("./openapi-document.ts");
    return c.body(OPENAPI_TEXT, 200, {
      "content-type": "application/json",
      "cache-control": DOCUMENT_CACHE,
      ...NO_SNIFF,
    });
  });

  app.get("/docs", async (c) => (await loadAnswers()).docsAnswer(c, viewer, DOCUMENT_CACHE));

  app.get(
    API_DOCS_VIEWER_PATH,
    async (c) => (await loadAnswers()).viewerScriptAnswer(c, viewer, DOCUMENT_CACHE),
  );
}
