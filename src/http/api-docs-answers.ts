/**
 * The answers of /docs and of its viewer's script (docs-routes.ts registers them): the page, the
 * script, or the 404 that says why there is none. Loaded with the first of them, so the Worker
 * ships this as a module of its own; the page itself is another (api-docs-page.ts).
 */
import type { Context } from "hono";
import type { ApiDocsViewer } from "../config/gateway-config.ts";
import type { GatewayEnv } from "./caller-middleware.ts";
import { problemResponse } from "./respond.ts";

const OFF =
  "the API reference at /docs is off on this gateway; TRACEFETCH_API_DOCS=1 turns it on " +
  "(on Workers, set it when building the worker too: TRACEFETCH_API_DOCS=1 npm run build:worker; " +
  "docs/deploy.md); the OpenAPI document is at /openapi.json";
const NOT_INSTALLED = "the API reference viewer (the @scalar/api-reference package) is not " +
  "installed where this gateway was started, or this worker was built without it " +
  "(TRACEFETCH_API_DOCS=1 npm run build:worker bundles it; docs/deploy.md); the OpenAPI " +
  "document is at /openapi.json";

/** The viewer's script, or the 404 that says why there is none. */
async function script(
  c: Context<GatewayEnv>,
  viewer: ApiDocsViewer | null,
): Promise<string | Response> {
  const requestId = c.get("requestId");
  if (viewer === null) return problemResponse("unknown", "not_found", requestId, OFF);
  return await viewer() ?? problemResponse("unknown", "not_found", requestId, NOT_INSTALLED);
}

/** `GET /docs`: the page, useless without its script, so a gateway that cannot serve it says so. */
export async function docsAnswer(
  c: Context<GatewayEnv>,
  viewer: ApiDocsViewer | null,
  cacheControl: string,
): Promise<Response> {
  const found = await script(c, viewer);
  if (found instanceof Response) return found;
  const { apiDocsPage } = await import("./api-docs-page.ts");
  return await apiDocsPage(c, cacheControl);
}

/** The viewer's script, served from this gateway, never from another origin. */
export async function viewerScriptAnswer(
  c: Context<GatewayEnv>,
  viewer: ApiDocsViewer | null,
  cacheControl: string,
): Promise<Response> {
  const found = await script(c, viewer);
  if (found instanceof Response) return found;
  return c.body(found, 200, {
    "content-type": "text/javascript; charset=utf-8",
    "cache-control": cacheControl,
    "x-content-type-options": "nosniff",
  });
}
