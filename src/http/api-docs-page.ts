/**
 * The API reference page at /docs: @scalar/hono-api-reference's page over /openapi.json, its viewer
 * script loaded from this gateway (docs-routes.ts serves it) and never from a CDN, under a Content
 * Security Policy that lets the page reach this origin only. docs-routes.ts loads this module on
 * the first /docs, so the Worker ships it as a module of its own.
 */
import type { Context } from "hono";
import { Scalar } from "@scalar/hono-api-reference";
import { API_DOCS_VIEWER_PATH } from "./route-table.ts";

const render = Scalar({
  url: "/openapi.json",
  cdn: API_DOCS_VIEWER_PATH,
  pageTitle: "TraceFetch Edge API reference",
  // What would reach another origin is left out: Scalar's fonts (the browser's own serve), the
  // button that opens Scalar's hosted client, and the `agent` feature that asks Scalar's registry.
  withDefaultFonts: false,
  hideClientButton: true,
  showDeveloperTools: "never",
  // Known to the viewer script, not yet to the page's configuration type.
  ...{ agent: { disabled: true } },
});

/** The gateway's icon, the page's at `GET /` (page/page-assets.ts). */
const ICON = '    <link rel="icon" href="/page/icon.svg" type="image/svg+xml" />';

type Page = { html: string; policy: string };

/** The same page for every request: rendered once, with the policy that fits it. */
let page: Promise<Page> | null = null;

export async function apiDocsPage(c: Context, cache: string): Promise<Response> {
  page ??= (async () => {
    const rendered = await render(c, async () => {});
    if (!(rendered instanceof Response)) throw new Error("the Scalar page rendered nothing");
    // The page's icon (/page/icon.svg), so a browser never asks for /favicon.ico and logs a 404.
    const html = (await rendered.text()).replace("</head>", `${ICON}\n  </head>`);
    return { html, policy: await policyFor(html) };
  })().catch((error) => {
    page = null;
    throw error;
  });
  const { html, policy } = await page;
  return new Response(html, {
    status: 200,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "cache-control": cache,
      "content-security-policy": policy,
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
    },
  });
}

/**
 * Scripts from this origin only, plus the page's one inline script (the viewer's start, which the
 * Scalar page writes inline) by its SHA-256; styles inline too, as the viewer injects its own.
 * No other origin is reachable: not for fonts, images, requests or frames.
 */
async function policyFor(html: string): Promise<string> {
  const hashes: string[] = [];
  for (const [, body] of html.matchAll(/<script(?![^>]*\ssrc=)[^>]*>([\s\S]*?)<\/script>/g)) {
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(body ?? ""));
    hashes.push(`'sha256-${btoa(String.fromCharCode(...new Uint8Array(digest)))}'`);
  }
  return [
    "default-src 'self'",
    `script-src 'self' ${hashes.join(" ")}`.trimEnd(),
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}
