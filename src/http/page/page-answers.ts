/**
 * The answers of `GET /` for a browser and of `GET /page/{name}` (page-route.ts registers them),
 * with the page's files: loaded with the first page asked for, so agents never load it and on
 * Workers it is a module of its own.
 */
import type { Context } from "hono";
import type { GatewayEnv } from "../caller-middleware.ts";
import { problemResponse } from "../respond.ts";
import { PAGE_FILES, PAGE_HTML } from "./page-assets.ts";

/** The page changes only with a deploy, yet its HTML and script must match: revalidate each. */
const PAGE_CACHE = "no-cache";

function pageResponse(
  c: Context<GatewayEnv>,
  csp: string,
  body: string,
  contentType: string,
  extra: Record<string, string> = {},
): Response {
  return new Response(body, {
    headers: {
      ...extra,
      "content-type": contentType,
      "content-security-policy": csp,
      "x-content-type-options": "nosniff",
      // A hit's link must not tell the page it leads to where the gateway is.
      "referrer-policy": "no-referrer",
      "cache-control": PAGE_CACHE,
      "x-request-id": c.get("requestId"),
    },
  });
}

/** The page itself, under the policy `csp`. */
export function pageAnswer(c: Context<GatewayEnv>, csp: string): Response {
  return pageResponse(c, csp, PAGE_HTML, "text/html; charset=utf-8", { vary: "accept" });
}

/** One of the page's files by its name in the path, or the 404 that lists them. */
export function pageFileAnswer(c: Context<GatewayEnv>, csp: string): Response {
  const file = c.req.param("file") ?? "";
  const asset = Object.hasOwn(PAGE_FILES, file) ? PAGE_FILES[file] : undefined;
  if (asset === undefined) {
    const known = Object.keys(PAGE_FILES).map((n) => `/page/${n}`).join(", ");
    return problemResponse(
      "index",
      "not_found",
      c.get("requestId"),
      `no page file ${file}; the page has ${known}`,
    );
  }
  return pageResponse(c, csp, asset.body, asset.contentType);
}
