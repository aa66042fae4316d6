/**
 * What each route answers, for the OpenAPI document (scripts/gen-openapi.ts): per path and method,
 * a summary, the parameters and body, the 200 answer, and the envelope codes it may refuse with,
 * whose statuses come from the code table. gen-openapi.ts fails when a route of the route table,
 * or a method the route allows, has no entry here.
 */
import type { EnvelopeCode } from "../src/protocol/codes.ts";
import { SCHEMA_NAMES } from "../src/protocol/schema-names.ts";
import {
  ACTION,
  ANY,
  BODY,
  envelopeOf,
  type Fragment,
  GUARDED,
  JSON_RPC,
  jsonBody,
  okEnvelope,
  OPEN_READ,
  raw,
  READ,
  schemaRef,
  SEARCH,
  SEARCH_OK,
} from "./openapi-answers.ts";
export type Tag = "search" | "providers" | "evidence" | "documents" | "mcp";

export type OperationSpec = {
  id: string;
  tag: Tag;
  summary: string;
  description: string;
  /** The 200 answer; null for a method that is refused, whose answer is among the refusals. */
  ok: Fragment | null;
  /** The envelopes it may answer besides 200 (statuses from the code table). */
  refusals: readonly EnvelopeCode[];
  parameters?: Fragment[];
  requestBody?: Fragment;
  /** Answers that are not envelopes, by status. */
  other?: Record<string, Fragment>;
};

const SEARCH_ABOUT = "Fans the query out to the providers the request selects, reads every " +
  "answer within its bounds, and fuses them into one ranked list that says which providers " +
  "found each page (`found_by`) and at what rank. A refused request is an ordinary envelope, " +
  "never a stream. Identical searches in flight share one fan-out.";

const MCP_REFUSED: OperationSpec["refusals"] = ["method_not_allowed"];

const FETCH_ABOUT = "Fetches one http(s) page under the manifest's fetch policy (no private " +
  "network unless opened, every redirect and resolved address checked, robots.txt honoured) " +
  "and answers its main content as markdown or text, with anchors, links, the SHA-256 of the " +
  "body and of the text, and a receipt the gateway signs (a compact JWS, checkable with " +
  "/.well-known/jwks.json). Admitted as a search is; a cached page says `cached` and `age_ms`. " +
  "With `query`, `evidence.passages` holds the paragraphs that answer it best (`max_passages`, " +
  "default 3), ranked as the corpus engine ranks documents.";

/** A fetch's refusals once read: its policy, the page, and its admission as a search. */
const FETCH: EnvelopeCode[] = [
  "timeout_out_of_range",
  "fetch_disabled",
  "url_forbidden",
  "robots_disallowed",
  "too_many_redirects",
  "unsupported_content_type",
  "fetch_failed",
  "overloaded",
  "rate_limited",
];

/** A crawl's stream: its events in NDJSON, or in SSE for `Accept: text/event-stream`. */
const CRAWL_OK: Fragment = {
  description: "The crawl's events as they happen: one `page` per page fetched (its `result` as " +
    "POST /v1/fetch answers it), `skipped` for each URL not fetched, then `done` with the counts; " +
    'each event is a `CrawlEvent` (docs/envelope.md, "Crawling a site").',
  headers: { "x-request-id": { $ref: "#/components/headers/RequestId" } },
  content: {
    "application/x-ndjson": {
      schema: { type: "string", description: "one CrawlEvent per line, as JSON" },
      "x-item-schema": schemaRef("CrawlEvent"),
    },
    "text/event-stream": {
      schema: {
        type: "string",
        description: "Server-Sent Events: `event:` the event's name, `data:` the CrawlEvent as " +
          "JSON; a `: heartbeat` comment every 15 s while waiting",
      },
      "x-item-schema": schemaRef("CrawlEvent"),
    },
  },
};

const queryParam = (name: string, description: string, schema: Fragment) => ({
  name,
  in: "query",
  required: name === "url",
  description,
  schema,
});

const FETCH_PARAMETERS: Fragment[] = [
  queryParam("url", "The page: an absolute http: or https: URL.", { type: "string" }),
  queryParam("format", "`markdown` (the default) or `text`.", {
    type: "string",
    enum: ["markdown", "text"],
  }),
  queryParam("max_chars", "The most characters of text answered (1 to 200,000).", {
    type: "string",
  }),
  queryParam("max_age_seconds", "The oldest cached page accepted; 0: fetch it now.", {
    type: "string",
  }),
  queryParam("timeout_ms", "The whole fetch's timeout (1 to 60,000).", { type: "string" }),
  queryParam("include_raw", "`true`: add the body as received, base64.", {
    type: "string",
    enum: ["true", "false"],
  }),
  queryParam("query", "Adds `evidence.passages`, ranked against this query.", { type: "string" }),
  queryParam("max_passages", "Passages answered at most (1 to 10, default 3; needs `query`).", {
    type: "string",
  }),
];

export const OPERATIONS: Record<string, Partial<Record<"get" | "post" | "delete", OperationSpec>>> =
  {
    "/": {
      get: {
        id: "index",
        tag: "documents",
        summary: "The index",
        description: "What this gateway is: its version, every route with its methods, the " +
          "JSON Schemas and the docs. A browser asking for `text/html` gets a page that runs a " +
          "search and draws each provider as it answers.",
        ok: {
          ...okEnvelope("IndexResult", "The index, or for `Accept: text/html` the search page."),
          content: {
            "application/json": { schema: envelopeOf("IndexResult") },
            "text/html": { schema: { type: "string" } },
          },
        },
        refusals: READ,
      },
    },
    "/v1/search": {
      get: {
        id: "search",
        tag: "search",
        summary: "Search (query parameters)",
        description: `${SEARCH_ABOUT} The GET form fills the request's fields from parameters.`,
        ok: SEARCH_OK,
        refusals: [...READ, "invalid_utf8", "unknown_field", ...SEARCH],
      },
      post: {
        id: "searchPost",
        tag: "search",
        summary: "Search (JSON body)",
        description: `${SEARCH_ABOUT} \`HEAD\` is refused: a search never runs for nothing.`,
        requestBody: jsonBody("SearchRequest"),
        ok: SEARCH_OK,
        refusals: [...GUARDED, ...BODY, ...SEARCH],
      },
    },
    "/v1/expand": {
      post: {
        id: "expand",
        tag: "providers",
        summary: "The evidence behind a locator",
        description: "Asks the one provider named for the text behind a locator it issued: take " +
          "`provider` from a merged entry's `found_by` and `locator` from the entry. The locator " +
          "goes to that provider only, under the token rules of naming it in a search.",
        requestBody: jsonBody("ExpandRequest"),
        ok: okEnvelope("ExpandResult", "The evidence, as the provider gave it."),
        refusals: [
          ...GUARDED,
          ...BODY,
          ...ACTION,
          "locator_unknown",
          "locator_expired",
          // An expand counts as a search against the caller's own `caller_limits`.
          "rate_limited",
        ],
      },
    },
    "/v1/fetch": {
      get: {
        id: "fetchGet",
        tag: "evidence",
        summary: "A page as evidence (GET form)",
        description: FETCH_ABOUT + " The GET form takes the request's fields as query parameters.",
        parameters: FETCH_PARAMETERS,
        ok: okEnvelope("FetchResult", "The page's evidence and its receipt."),
        refusals: [...READ, ...FETCH, "unknown_field", "null_field", "invalid_utf8"],
      },
      post: {
        id: "fetch",
        tag: "evidence",
        summary: "A page as evidence",
        description: FETCH_ABOUT,
        requestBody: jsonBody("FetchRequest"),
        ok: okEnvelope("FetchResult", "The page's evidence and its receipt."),
        refusals: [...GUARDED, ...BODY, ...FETCH],
      },
    },
    "/v1/crawl": {
      post: {
        id: "crawl",
        tag: "evidence",
        summary: "A bounded crawl of one site",
        description: "Fetches a page and the pages of its origin it links to, breadth first, to " +
          "`max_depth` links and at most `max_pages` pages (1 to 50, default 10), every page " +
          "under the rules of POST /v1/fetch and admitted as a fetch; robots.txt honoured, at " +
          "most 2 requests in flight and the site's Crawl-delay between them. Refusals of the " +
          "request, the first URL or the first page's admission are envelopes; the rest is a " +
          "stream that stops when the caller goes away.",
        requestBody: jsonBody("CrawlRequest"),
        ok: CRAWL_OK,
        refusals: [
          ...GUARDED,
          ...BODY,
          "fetch_disabled",
          "url_forbidden",
          "overloaded",
          "rate_limited",
        ],
      },
    },
    "/v1/verify": {
      post: {
        id: "verify",
        tag: "evidence",
        summary: "Check a receipt, its text and a quote",
        description: "Checks a fetch's receipt against this gateway's own keys, the markdown " +
          "against the receipt's `markdown_sha256`, and the quote (if given) in the markdown, " +
          "white space and case folded. The verdict (`verified`, `quote_not_found`, " +
          "`content_mismatch`, `signature_invalid`, `unsigned`) is an answer, `ok: true`; a " +
          "found quote comes with its lines and the heading it sits under.",
        requestBody: jsonBody("VerifyRequest"),
        ok: okEnvelope("VerifyResult", "The verdict."),
        refusals: [...GUARDED, ...BODY],
      },
    },
    "/v1/refresh": {
      post: {
        id: "refresh",
        tag: "providers",
        summary: "Bring a provider's index up to date",
        description: "Asks a provider that owns an index to refresh it and answers its health. " +
          'Only a token granting `tracefetch-admin` may (docs/security.md, "Refresh").',
        requestBody: jsonBody("RefreshRequest"),
        ok: okEnvelope("RefreshResult", "The provider's health once refreshed."),
        refusals: [...GUARDED, ...BODY, ...ACTION, "forbidden", "state_unavailable"],
      },
    },
    "/v1/providers": {
      get: {
        id: "providers",
        tag: "providers",
        summary: "The providers you may search, and the tiers",
        description: "Names, scopes, source classes, sensitivity and cost; never endpoints. A " +
          "sensitive provider is listed only for a token that grants its scope.",
        ok: okEnvelope("ProvidersResult", "The providers and tiers."),
        refusals: READ,
      },
    },
    "/v1/status": {
      get: {
        id: "status",
        tag: "providers",
        summary: "The gateway's state",
        description: "The version, each provider's state and the searches in flight. Open to " +
          "anyone, even when every other route needs a token.",
        ok: okEnvelope("StatusResult", "The gateway's state."),
        refusals: [...ANY, "invalid_field"],
      },
    },
    "/v1/doctor": {
      get: {
        id: "doctor",
        tag: "providers",
        summary: "Each provider's health",
        description: "Each provider you may see, with its health, probed at most once per 30 s " +
          "per gateway instance.",
        ok: okEnvelope("GatewayDoctorResult", "Each provider's state and health."),
        refusals: READ,
      },
    },
    "/schemas/{name}.json": {
      get: {
        id: "schema",
        tag: "documents",
        summary: "A JSON Schema",
        description: "A JSON Schema (draft 2020-12) of the wire formats, as a raw document.",
        parameters: [{
          name: "name",
          in: "path",
          required: true,
          schema: { enum: [...SCHEMA_NAMES], type: "string" },
        }],
        ok: raw("application/json", "The schema, raw.", {
          type: "object",
          description: "a JSON Schema, draft 2020-12",
        }),
        refusals: [...READ, "not_found"],
      },
    },
    "/.well-known/jwks.json": {
      get: {
        id: "jwks",
        tag: "documents",
        summary: "The keys of gateway tokens",
        description: "The public keys providers verify gateway tokens with (Ed25519), as a raw " +
          "JWK Set; 404 when the gateway has no signing key. Open to anyone.",
        ok: raw("application/json", "The JWK Set, raw.", {
          type: "object",
          required: ["keys"],
          properties: { keys: { type: "array", items: { type: "object" } } },
        }),
        refusals: [...ANY, "invalid_field", "not_found"],
      },
    },
    "/metrics": {
      get: {
        id: "metrics",
        tag: "providers",
        summary: "This instance's metrics",
        description: "Searches, provider attempts, cache lookups, refusals and request " +
          "durations in the Prometheus text format, per instance; labels name providers, " +
          "outcomes, codes and route patterns, never a query, a locator or a caller. Open to " +
          "anyone unless TRACEFETCH_REQUIRE_AUTH, then a token granting `tracefetch-metrics` or " +
          "`tracefetch-admin`. 404 where the gateway keeps no registry (Workers push theirs " +
          'over OTLP; docs/deploy.md, "Observing it").',
        ok: raw("text/plain", "The metrics, Prometheus text format 0.0.4.", { type: "string" }),
        refusals: [...READ, "forbidden", "not_found"],
      },
    },
    "/openapi.json": {
      get: {
        id: "openapi",
        tag: "documents",
        summary: "This document",
        description: "Every route and answer, as OpenAPI 3.1, raw; served without a token.",
        ok: raw("application/json", "This document, raw.", { type: "object" }),
        refusals: OPEN_READ,
      },
    },
    "/docs": {
      get: {
        id: "docs",
        tag: "documents",
        summary: "The API reference",
        description: "This document as a page for a browser, its viewer script served by the " +
          "gateway. On Workers it answers 404 unless TRACEFETCH_API_DOCS=1 (docs/deploy.md).",
        ok: raw("text/html", "The page."),
        refusals: [...OPEN_READ, "not_found"],
      },
    },
    "/docs/scalar.js": {
      get: {
        id: "docsViewer",
        tag: "documents",
        summary: "The API reference's viewer script",
        description: "The script /docs runs, served by the gateway so the page needs no other " +
          "origin; 404 when /docs is off.",
        ok: raw("text/javascript", "The script."),
        refusals: [...OPEN_READ, "not_found"],
      },
    },
    "/page/{name}": {
      get: {
        id: "pageFile",
        tag: "documents",
        summary: "A file of the search page",
        description: "The script (`app.js`), style sheet (`app.css`) and icon (`icon.svg`) of " +
          "the page `GET /` shows a browser, served without a token.",
        parameters: [{ name: "name", in: "path", required: true, schema: { type: "string" } }],
        ok: {
          description: "The file.",
          content: {
            "text/javascript": { schema: { type: "string" } },
            "text/css": { schema: { type: "string" } },
            "image/svg+xml": { schema: { type: "string" } },
          },
        },
        refusals: [...OPEN_READ, "not_found"],
      },
    },
    "/mcp": {
      post: {
        id: "mcp",
        tag: "mcp",
        summary: "The MCP endpoint",
        description: "The Model Context Protocol over Streamable HTTP, stateless: tools " +
          "`search`, `expand`, `providers` and `status`. A token is checked as on every route, " +
          "before any tool runs; a browser's `Origin` must be allowed.",
        parameters: [{
          name: "mcp-protocol-version",
          in: "header",
          required: false,
          schema: { type: "string" },
        }],
        requestBody: { required: true, content: { "application/json": { schema: JSON_RPC } } },
        ok: {
          description: "The JSON-RPC answer, or when the client accepts it and sent a progress " +
            "token, Server-Sent Events carrying progress notifications and then the answer.",
          content: {
            "application/json": { schema: JSON_RPC },
            "text/event-stream": { schema: { type: "string" } },
          },
        },
        // 403 `forbidden`: a browser `Origin` that is not allowed, refused before the token.
        refusals: [...GUARDED, "forbidden"],
        other: {
          "202": { description: "A notification or a response, accepted; no body." },
          "400": {
            description: "A JSON-RPC error: not one JSON-RPC message, or an " +
              "`MCP-Protocol-Version` this endpoint does not speak.",
            content: { "application/json": { schema: JSON_RPC } },
          },
          "406": {
            description: "A JSON-RPC error: `Accept` lacks `application/json` or " +
              "`text/event-stream`.",
            content: { "application/json": { schema: JSON_RPC } },
          },
          "415": {
            description: "A JSON-RPC error: the body is not `application/json`.",
            content: { "application/json": { schema: JSON_RPC } },
          },
        },
      },
      get: {
        id: "mcpGet",
        tag: "mcp",
        summary: "No server stream",
        description: "Refused: the endpoint is stateless and opens no stream of its own.",
        ok: null,
        refusals: MCP_REFUSED,
      },
      delete: {
        id: "mcpDelete",
        tag: "mcp",
        summary: "No session to end",
        description: "Refused: the endpoint keeps no session.",
        ok: null,
        refusals: MCP_REFUSED,
      },
    },
  };
