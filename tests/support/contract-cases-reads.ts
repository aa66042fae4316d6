/** The contract's cases of the routes that only read (tests/support/contract-cases.ts). */
import { type ContractCase, readRefusals } from "./contract-case.ts";

/** GET /: the index, as JSON and as a page. */
export const INDEX_CASES: readonly ContractCase[] = [
  { name: "the index", method: "GET", path: "/", status: 200, code: "ok" },
  { name: "the index, indented", method: "GET", path: "/?pretty=1", status: 200, code: "ok" },
  {
    name: "the search page",
    method: "GET",
    path: "/",
    headers: { accept: "text/html" },
    status: 200,
    type: "text/html",
  },
  { name: "headers only", method: "HEAD", path: "/", status: 200 },
  { name: "a method it does not allow", method: "POST", path: "/", status: 405 },
  ...readRefusals("/"),
];

/** GET /v1/providers. */
export const PROVIDERS_CASES: readonly ContractCase[] = [
  { name: "README", method: "GET", path: "/v1/providers", status: 200, code: "ok" },
  {
    name: "with a sensitive provider granted",
    method: "GET",
    path: "/v1/providers",
    gateway: "full",
    token: "reader",
    status: 200,
    code: "ok",
  },
  { name: "headers only", method: "HEAD", path: "/v1/providers", status: 200 },
  { name: "a method it does not allow", method: "POST", path: "/v1/providers", status: 405 },
  ...readRefusals("/v1/providers"),
];

/** GET /v1/status, with mining and shared state off and on. */
export const STATUS_CASES: readonly ContractCase[] = [
  {
    name: "README",
    method: "GET",
    path: "/v1/status",
    status: 200,
    code: "ok",
    shows: { "result.mining.sink": null, "result.mining.state": "disabled" },
  },
  {
    name: "mining, shared state and limits on",
    method: "GET",
    path: "/v1/status",
    gateway: "full",
    status: 200,
    code: "ok",
    shows: {
      "result.mining.sink": "file",
      "result.mining.state": "enabled",
      "result.shared_state.state": "ok",
      "result.max_inflight": 1,
    },
  },
  {
    name: "open even where every route needs a token",
    method: "GET",
    path: "/v1/status",
    gateway: "locked",
    status: 200,
    code: "ok",
  },
  { name: "headers only", method: "HEAD", path: "/v1/status", status: 200 },
  { name: "a method it does not allow", method: "POST", path: "/v1/status", status: 405 },
  ...readRefusals("/v1/status").filter((c) => c.status !== 401 || c.code === "token_invalid"),
];

/** GET /v1/doctor. */
export const DOCTOR_CASES: readonly ContractCase[] = [
  { name: "each provider's health", method: "GET", path: "/v1/doctor", status: 200, code: "ok" },
  {
    name: "with failing providers",
    method: "GET",
    path: "/v1/doctor",
    gateway: "full",
    token: "reader",
    status: 200,
    code: "ok",
  },
  { name: "headers only", method: "HEAD", path: "/v1/doctor", status: 200 },
  { name: "a method it does not allow", method: "POST", path: "/v1/doctor", status: 405 },
  ...readRefusals("/v1/doctor"),
];

/** GET /schemas/{name}.json. */
export const SCHEMA_CASES: readonly ContractCase[] = [
  { name: "README", method: "GET", path: "/schemas/envelope.json", status: 200 },
  { name: "headers only", method: "HEAD", path: "/schemas/envelope.json", status: 200 },
  {
    name: "a schema that is not published",
    method: "GET",
    path: "/schemas/nope.json",
    status: 404,
    code: "not_found",
    outside: true,
  },
  {
    name: "a method it does not allow",
    method: "POST",
    path: "/schemas/trace.json",
    status: 405,
  },
  ...readRefusals("/schemas/trace.json"),
];

/** GET /.well-known/jwks.json, with and without a signing key. */
export const JWKS_CASES: readonly ContractCase[] = [
  {
    name: "the signing key",
    method: "GET",
    path: "/.well-known/jwks.json",
    gateway: "full",
    status: 200,
    shows: { "keys.0.kid": "gateway-1" },
  },
  {
    name: "no signing key",
    method: "GET",
    path: "/.well-known/jwks.json",
    status: 404,
    code: "not_found",
  },
  {
    name: "headers only",
    method: "HEAD",
    path: "/.well-known/jwks.json",
    gateway: "full",
    status: 200,
  },
  {
    name: "a method it does not allow",
    method: "POST",
    path: "/.well-known/jwks.json",
    status: 405,
  },
  // Open to anyone: a token is checked only when one is presented.
  ...readRefusals("/.well-known/jwks.json", false, "full").filter((c) => c.code !== "unauthorized"),
];

/** The search page's files. */
export const PAGE_CASES: readonly ContractCase[] = [
  { name: "the script", method: "GET", path: "/page/app.js", status: 200 },
  { name: "the style sheet", method: "GET", path: "/page/app.css", status: 200 },
  { name: "the icon", method: "GET", path: "/page/icon.svg", status: 200 },
  { name: "headers only", method: "HEAD", path: "/page/app.js", status: 200 },
  { name: "no such file", method: "GET", path: "/page/nope.txt", status: 404, code: "not_found" },
  { name: "a method it does not allow", method: "POST", path: "/page/app.js", status: 405 },
  ...readRefusals("/page/app.js", true),
];

/** GET /openapi.json. */
export const OPENAPI_CASES: readonly ContractCase[] = [
  { name: "README", method: "GET", path: "/openapi.json", status: 200 },
  { name: "headers only", method: "HEAD", path: "/openapi.json", status: 200 },
  { name: "a method it does not allow", method: "POST", path: "/openapi.json", status: 405 },
  ...readRefusals("/openapi.json", true),
];

/** GET /docs, on and off. */
export const DOCS_CASES: readonly ContractCase[] = [
  { name: "the page", method: "GET", path: "/docs", gateway: "full", status: 200 },
  { name: "headers only", method: "HEAD", path: "/docs", gateway: "full", status: 200 },
  {
    name: "off",
    method: "GET",
    path: "/docs",
    gateway: "locked",
    status: 404,
    code: "not_found",
  },
  { name: "a method it does not allow", method: "POST", path: "/docs", status: 405 },
  ...readRefusals("/docs", true),
];

/** GET /docs/scalar.js, on and off. */
export const DOCS_VIEWER_CASES: readonly ContractCase[] = [
  { name: "the script", method: "GET", path: "/docs/scalar.js", gateway: "full", status: 200 },
  {
    name: "headers only",
    method: "HEAD",
    path: "/docs/scalar.js",
    gateway: "full",
    status: 200,
  },
  {
    name: "off",
    method: "GET",
    path: "/docs/scalar.js",
    gateway: "locked",
    status: 404,
    code: "not_found",
  },
  { name: "a method it does not allow", method: "POST", path: "/docs/scalar.js", status: 405 },
  ...readRefusals("/docs/scalar.js", true),
];

/** GET /metrics: open by default; with TRACEFETCH_REQUIRE_AUTH a metrics or admin token. */
export const METRICS_CASES: readonly ContractCase[] = [
  { name: "the metrics", method: "GET", path: "/metrics", status: 200, type: "text/plain" },
  {
    name: "with caller limits and a cache",
    method: "GET",
    path: "/metrics",
    gateway: "full",
    status: 200,
  },
  { name: "headers only", method: "HEAD", path: "/metrics", status: 200 },
  {
    name: "a metrics token where tokens are required",
    method: "GET",
    path: "/metrics",
    gateway: "guarded",
    token: "metrics",
    status: 200,
  },
  {
    name: "an admin token where tokens are required",
    method: "GET",
    path: "/metrics",
    gateway: "guarded",
    token: "admin",
    status: 200,
  },
  {
    name: "no token where tokens are required",
    method: "GET",
    path: "/metrics",
    gateway: "guarded",
    status: 401,
    code: "unauthorized",
  },
  {
    name: "a token without the metrics scope",
    method: "GET",
    path: "/metrics",
    gateway: "guarded",
    token: "reader",
    status: 403,
    code: "forbidden",
  },
  {
    name: "no registry here (a Worker pushes its metrics over OTLP)",
    method: "GET",
    path: "/metrics",
    gateway: "bare",
    status: 404,
    code: "not_found",
  },
  { name: "a method it does not allow", method: "POST", path: "/metrics", status: 405 },
  ...readRefusals("/metrics", false, "full"),
];
