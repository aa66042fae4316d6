/**
 * Every route the gateway answers, in one table: the 405s read their Allow header from it and
 * `GET /` lists it, so the two never disagree.
 */
import type { Command } from "../protocol/codes.ts";

export type Route = {
  /** The path as the router matches it. */
  pattern: string;
  /** The path as a person writes it. */
  path: string;
  /** The command its envelopes carry. */
  command: Command;
  /** The methods it allows: its 405's Allow header. */
  allow: string;
  /** What it answers, in a few words (`GET /` shows this). */
  answers: string;
};

/** The viewer script `/docs` loads: served by the gateway, so the page needs no other origin. */
export const API_DOCS_VIEWER_PATH = "/docs/scalar.js";

const SEARCH_METHODS = "GET, POST";
const READ_METHODS = "GET, HEAD";

export const ROUTES: readonly Route[] = [
  {
    pattern: "/",
    path: "/",
    command: "index",
    allow: READ_METHODS,
    answers:
      "this index: the routes, the version, the schemas and the docs; ?pretty=1 indents any GET answer",
  },
  {
    pattern: "/v1/search",
    path: "/v1/search",
    command: "search",
    allow: SEARCH_METHODS,
    answers:
      "a search: GET ?q=... or POST a JSON request; streams with stream=ndjson or stream=sse",
  },
  {
    pattern: "/v1/expand",
    path: "/v1/expand",
    command: "expand",
    allow: "POST",
    answers: "the evidence behind a locator: POST {provider, locator}, provider from found_by",
  },
  {
    pattern: "/v1/fetch",
    path: "/v1/fetch",
    command: "fetch",
    allow: SEARCH_METHODS,
    answers:
      "a page as evidence: GET ?url=... or POST {url}; markdown, anchors, hashes and a signed receipt",
  },
  {
    pattern: "/v1/crawl",
    path: "/v1/crawl",
    command: "crawl",
    allow: "POST",
    answers:
      "a bounded crawl of one site as NDJSON or SSE: POST {url, max_pages, max_depth, query}; a page event per page",
  },
  {
    pattern: "/v1/verify",
    path: "/v1/verify",
    command: "verify",
    allow: "POST",
    answers:
      "checks a fetch's receipt, the markdown it covers and a quote: POST {receipt, markdown, quote}",
  },
  {
    pattern: "/v1/refresh",
    path: "/v1/refresh",
    command: "refresh",
    allow: "POST",
    answers:
      "asks a provider to bring its index up to date: POST {provider}; needs tracefetch-admin",
  },
  {
    pattern: "/v1/providers",
    path: "/v1/providers",
    command: "providers",
    allow: READ_METHODS,
    answers: "the providers you may search, and the tiers",
  },
  {
    pattern: "/v1/status",
    path: "/v1/status",
    command: "status",
    allow: READ_METHODS,
    answers: "the version, each provider's state and the searches in flight",
  },
  {
    pattern: "/v1/doctor",
    path: "/v1/doctor",
    command: "doctor",
    allow: READ_METHODS,
    answers: "each provider's state and health, probed at most once per 30 s",
  },
  {
    pattern: "/mcp",
    path: "/mcp",
    command: "unknown",
    allow: "POST",
    answers:
      "MCP (Streamable HTTP, stateless): the tools search, expand, fetch, verify, providers and status, in JSON-RPC",
  },
  {
    pattern: "/metrics",
    path: "/metrics",
    command: "unknown",
    allow: READ_METHODS,
    answers:
      "this instance's metrics in the Prometheus text format; with TRACEFETCH_REQUIRE_AUTH, a token granting tracefetch-metrics or tracefetch-admin",
  },
  {
    pattern: "/schemas/:file",
    path: "/schemas/{name}.json",
    command: "schema",
    allow: READ_METHODS,
    answers: "a JSON Schema, as a raw document",
  },
  {
    pattern: "/.well-known/jwks.json",
    path: "/.well-known/jwks.json",
    command: "unknown",
    allow: READ_METHODS,
    answers:
      "the public keys providers verify gateway tokens with, and anyone a fetch receipt, as a raw JWK Set",
  },
  {
    pattern: "/page/:file",
    path: "/page/{name}",
    command: "index",
    allow: READ_METHODS,
    answers:
      "the script (app.js), style sheet (app.css) and icon (icon.svg) of the page GET / shows a browser",
  },
  {
    pattern: "/openapi.json",
    path: "/openapi.json",
    command: "unknown",
    allow: READ_METHODS,
    answers: "every route and answer as an OpenAPI 3.1 document, raw",
  },
  {
    pattern: "/docs",
    path: "/docs",
    command: "unknown",
    allow: READ_METHODS,
    answers:
      "the OpenAPI document as a page for a browser; on Workers only with TRACEFETCH_API_DOCS=1",
  },
  {
    pattern: API_DOCS_VIEWER_PATH,
    path: API_DOCS_VIEWER_PATH,
    command: "unknown",
    allow: READ_METHODS,
    answers: "the script the /docs page runs, served by the gateway itself",
  },
];

/** The pattern of the route a path falls under (a metric's or a span's `http.route`), or null. */
export function routeOf(pathname: string): string | null {
  for (const { pattern } of ROUTES) {
    const match = pattern.endsWith("/:file")
      ? pathname.startsWith(pattern.slice(0, -":file".length))
      : pathname === pattern;
    if (match) return pattern;
  }
  return null;
}

/** The documents that describe the routes and their answers, as paths in the source repository. */
export const DOCS: readonly string[] = [
  "README.md",
  "docs/envelope.md",
  "docs/cli.md",
  "docs/protocol.md",
  "docs/providers.md",
  "docs/security.md",
  "docs/deploy.md",
  "docs/mcp.md",
];
