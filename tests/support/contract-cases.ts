/**
 * The API contract's table (tests/openapi-contract.test.ts): for each route of the route table,
 * the requests that show each of its answers, successes, refusals and streams, each checked
 * against /openapi.json by Prism and against the JSON Schemas under /schemas. A route is added
 * here when it is added to src/http/route-table.ts (its rows in a contract-cases-*.ts file, or one
 * of its own): the test names a route, a method, a documented status or an envelope code that no
 * case reaches. A case is one ContractCase (tests/support/contract-case.ts).
 *
 * Gateways (tests/support/contract-gateways.ts): `default` is `npm start` with no settings; `full`
 * turns on tokens, mining, shared state, the cache, caller limits and fetching from a loopback
 * site; `locked` needs a token on every route and cannot fetch its keys; `faulty` answers each
 * route's 500; `minimal` has one provider and nothing else, so it fetches no page.
 */
import type { EnvelopeCode } from "../../src/protocol/codes.ts";
import { type ContractCase, JSON_HEADERS } from "./contract-case.ts";
import { EXPAND_CASES, MCP_CASES, REFRESH_CASES } from "./contract-cases-actions.ts";
import {
  DOCS_CASES,
  DOCS_VIEWER_CASES,
  DOCTOR_CASES,
  INDEX_CASES,
  JWKS_CASES,
  METRICS_CASES,
  OPENAPI_CASES,
  PAGE_CASES,
  PROVIDERS_CASES,
  SCHEMA_CASES,
  STATUS_CASES,
} from "./contract-cases-reads.ts";
import { SEARCH_CASES } from "./contract-cases-search.ts";
import { FETCH_CASES, VERIFY_CASES } from "./contract-cases-evidence.ts";
import { CRAWL_CASES } from "./contract-cases-crawl.ts";

export type { ContractCase } from "./contract-case.ts";

/** Each route's cases, by its path in the route table (and the document). */
export const CASES: Record<string, readonly ContractCase[]> = {
  "/": INDEX_CASES,
  "/v1/search": SEARCH_CASES,
  "/v1/expand": EXPAND_CASES,
  "/v1/fetch": FETCH_CASES,
  "/v1/crawl": CRAWL_CASES,
  "/v1/verify": VERIFY_CASES,
  "/v1/refresh": REFRESH_CASES,
  "/v1/providers": PROVIDERS_CASES,
  "/v1/status": STATUS_CASES,
  "/v1/doctor": DOCTOR_CASES,
  "/mcp": MCP_CASES,
  "/schemas/{name}.json": SCHEMA_CASES,
  "/.well-known/jwks.json": JWKS_CASES,
  "/page/{name}": PAGE_CASES,
  "/openapi.json": OPENAPI_CASES,
  "/metrics": METRICS_CASES,
  "/docs": DOCS_CASES,
  "/docs/scalar.js": DOCS_VIEWER_CASES,
};

/** Requests to no route: answered 404 (or by the listener) whatever the path. */
export const UNROUTED: readonly ContractCase[] = [
  { name: "no such route", method: "GET", path: "/nope", status: 404, code: "not_found" },
  {
    name: "one spelling per route: no trailing slash",
    method: "GET",
    path: "/v1/search/?q=deadline",
    status: 404,
    code: "not_found",
  },
  {
    name: "both Transfer-Encoding and Content-Length",
    method: "POST",
    path: "/v1/search",
    headers: { ...JSON_HEADERS, "transfer-encoding": "chunked", "content-length": "2" },
    body: "{}",
    raw: "send",
    status: 400,
    code: "bad_request",
  },
];

/**
 * Documented answers no request from outside can bring about, each with the reason; the test
 * still checks that each is documented where the code table says.
 */
export const UNREACHED: Partial<Record<EnvelopeCode, string>> = {};

/**
 * Refusals of the listener, before any route is chosen: documented on every operation, and shown
 * by one case rather than one per operation.
 */
export const ANY_ROUTE: Partial<Record<EnvelopeCode, string>> = {
  headers_too_large: "the request line and headers are read before any route is chosen",
};
