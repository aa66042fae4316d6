/**
 * The API contract's table (tests/openapi-contract.test.ts): for each route of the route table,
 * the requests that show each of its answers, successes, refusals and streams, each checked
 * against /openapi.json by Prism and against the JSON Schemas under /schemas. A route is added
 * here when it is added to src/http/route-table.ts: the test names a route, a method, a documented
 * status or an envelope code that no case reaches.
 *
 * Gateways (tests/support/contract-gateways.ts): `default` is `npm start` with no settings; `full`
 * turns on tokens, mining, shared state, the cache and caller limits; `locked` needs a token on
 * every route and cannot fetch its keys.
 */
import type { EnvelopeCode } from "../../src/protocol/codes.ts";
import type { GatewayName, TokenName, World } from "./contract-gateways.ts";

export type ContractCase = {
  /** What the case shows, in a few words. */
  name: string;
  method: string;
  /** The path and query sent. */
  path: string;
  /** Where it is sent; `default` when absent. */
  gateway?: GatewayName;
  token?: TokenName;
  headers?: Record<string, string>;
  /** A JSON body, sent as `application/json` unless `headers` say otherwise. */
  json?: unknown;
  /** A body sent as these bytes. */
  body?: string | Uint8Array;
  /**
   * Sent on a socket, byte for byte, and its answer then shown to Prism: for requests Prism would
   * rewrite (a body that is not JSON or not UTF-8) or could not carry (a body that stops).
   * `stall`: the body's length is announced, and it stops after the bytes given.
   */
  raw?: "send" | "stall";
  /** The status expected, and the envelope's code when the answer is an envelope. */
  status: number;
  code?: EnvelopeCode;
  /** The media type the answer must have, where the case shows one of several. */
  type?: string;
  /** Values the answer must hold, by dotted path (`result.mining.sink`): what the case shows. */
  shows?: Record<string, unknown>;
  /** The request breaks the document on purpose: Prism's findings on the request's side are due. */
  outside?: true;
  /** What the world must be before it is sent; what `before` returns is run after it. */
  before?: (world: World) => Promise<(() => Promise<void>) | void>;
};

const JSON_HEADERS = { "content-type": "application/json" };
const MCP_ACCEPT = { accept: "application/json, text/event-stream" };
const MCP_INIT = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "c", version: "1" },
  },
};
/** Over 1 MiB: the body limit. */
const HUGE = "x".repeat(1_100_000);
/** Over 16 KiB of request line and headers. */
const LONG_QUERY = "q".repeat(17_000);

/** A fault of the gateway's own: its 500 envelope. */
const FAULT = {
  name: "a fault of the gateway",
  gateway: "faulty",
  status: 500,
  code: "internal_error",
} as const;

const holdSlot = async (world: World) => (await world.holdSlot()).release;

/** The refusals of any GET: `pretty` out of range, no token, a bad token, keys out of reach. */
function readRefusals(path: string, open = false, gateway?: GatewayName): ContractCase[] {
  const join = path.includes("?") ? "&" : "?";
  const cases: ContractCase[] = [
    {
      name: "pretty out of range",
      method: "GET",
      path: `${path}${join}pretty=7`,
      ...(gateway === undefined ? {} : { gateway }),
      status: 400,
      code: "invalid_field",
      outside: true,
    },
    { ...FAULT, method: "GET", path },
  ];
  if (open) return cases;
  return [
    ...cases,
    {
      name: "no token where one is needed",
      method: "GET",
      path,
      gateway: "locked",
      status: 401,
      code: "unauthorized",
    },
    {
      name: "a token that fails",
      method: "GET",
      path,
      gateway: "full",
      token: "invalid",
      status: 401,
      code: "token_invalid",
    },
    {
      name: "keys out of reach",
      method: "GET",
      path,
      gateway: "locked",
      token: "unfetchable",
      status: 503,
      code: "auth_unavailable",
    },
  ];
}

const holdBody = async (world: World) => (await world.holdBody()).release;

/**
 * The refusals of any POST with a JSON body: its media type, size, shape and arrival, and the
 * token; `valid` is a body it accepts.
 */
function bodyRefusals(
  path: string,
  valid: Record<string, string>,
  gateway: GatewayName,
): ContractCase[] {
  const field = Object.keys(valid)[0] as string;
  const post = { method: "POST", path, gateway };
  return [
    {
      ...post,
      name: "not JSON's media type",
      headers: { "content-type": "text/plain" },
      body: "{}",
      status: 415,
      code: "unsupported_media_type",
      outside: true,
    },
    {
      ...post,
      name: "over 1 MiB",
      json: { query: HUGE },
      status: 413,
      code: "body_too_large",
      outside: true,
    },
    {
      ...post,
      name: "not JSON",
      headers: JSON_HEADERS,
      body: '{"query":',
      raw: "send",
      status: 400,
      code: "invalid_json",
    },
    {
      ...post,
      name: "not UTF-8",
      headers: JSON_HEADERS,
      body: new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]),
      raw: "send",
      status: 400,
      code: "invalid_utf8",
    },
    {
      ...post,
      name: "a field no schema knows",
      json: { nope: 1 },
      status: 400,
      code: "unknown_field",
      outside: true,
    },
    {
      ...post,
      name: "an explicit null",
      json: { ...valid, [field]: null },
      status: 400,
      code: "null_field",
      outside: true,
    },
    {
      ...post,
      name: "a body that stops arriving",
      gateway: "full",
      headers: JSON_HEADERS,
      body: '{"q',
      raw: "stall",
      status: 408,
      code: "request_timeout",
    },
    { ...post, ...FAULT, json: valid },
    {
      ...post,
      name: "another body of this client's in reading",
      gateway: "full",
      json: valid,
      status: 429,
      code: "overloaded",
      before: holdBody,
    },
    {
      ...post,
      name: "no token where one is needed",
      gateway: "locked",
      json: {},
      status: 401,
      code: "unauthorized",
      outside: true,
    },
    {
      ...post,
      name: "an expired token",
      gateway: "full",
      token: "expired",
      json: {},
      status: 401,
      code: "token_expired",
      outside: true,
    },
    {
      ...post,
      name: "keys out of reach",
      gateway: "locked",
      token: "unfetchable",
      json: {},
      status: 503,
      code: "auth_unavailable",
      outside: true,
    },
  ];
}

/** The search's own refusals, as GET parameters. */
const searchRefusals: ContractCase[] = [
  ["query_empty", "q=%20"],
  ["query_too_long", `q=${"q".repeat(2_001)}`],
  ["limit_out_of_range", "q=deadline&limit=0"],
  ["timeout_out_of_range", "q=deadline&timeout_ms=0"],
  ["unknown_scope", "q=deadline&scope=nope"],
  ["unknown_provider", "q=deadline&providers=nope"],
  ["unknown_tier", "q=deadline&tier=nope"],
  ["provider_not_in_scope", "q=deadline&scope=specs&providers=engineering"],
  ["no_providers_selected", "q=deadline&providers="],
  ["unknown_field", "q=deadline&nope=1"],
].map(([code, query]) => ({
  name: code as string,
  method: "GET",
  path: `/v1/search?${query}`,
  status: 400,
  code: code as EnvelopeCode,
  // Each breaks a parameter's schema, but for these three whose rule is in code.
  ...(["unknown_scope", "unknown_provider", "unknown_tier", "provider_not_in_scope"]
      .includes(code as string)
    ? {}
    : { outside: true as const }),
}));

export const CASES: Record<string, readonly ContractCase[]> = {
  "/": [
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
  ],
  "/v1/search": [
    { name: "README", method: "GET", path: "/v1/search?q=deadline", status: 200, code: "ok" },
    {
      name: "README",
      method: "GET",
      path: "/v1/search?q=retry%20after&limit=3&view=merged",
      status: 200,
      code: "ok",
    },
    {
      name: "README",
      method: "GET",
      path: "/v1/search?q=cancellation&scope=specs",
      status: 200,
      code: "ok",
    },
    {
      name: "README",
      method: "GET",
      path: "/v1/search?q=fusion&providers=engineering,reference&tier=fast",
      status: 200,
      code: "ok",
    },
    {
      name: "README, streamed as NDJSON",
      method: "GET",
      path: "/v1/search?q=deadline&stream=ndjson",
      status: 200,
      type: "application/x-ndjson",
    },
    {
      name: "README, streamed as SSE",
      method: "GET",
      path: "/v1/search?q=deadline",
      headers: { accept: "text/event-stream" },
      status: 200,
      type: "text/event-stream",
    },
    {
      name: "with filters, cached on the full gateway",
      method: "GET",
      path:
        "/v1/search?q=deadline&providers=notes&published_after=2024-01-01&domains=notes.example",
      gateway: "full",
      status: 200,
      code: "ok",
    },
    {
      name: "answered from the cache",
      method: "GET",
      path:
        "/v1/search?q=deadline&providers=notes&published_after=2024-01-01&domains=notes.example",
      gateway: "full",
      status: 200,
      code: "ok",
      shows: { "result.candidates.0.cached": true },
    },
    {
      name: "a sensitive provider, with a token granting it",
      method: "GET",
      path: "/v1/search?q=deadline&providers=private",
      gateway: "full",
      token: "reader",
      status: 200,
      code: "ok",
      shows: { "result.merged.0.sensitivity": "account-visible" },
    },
    {
      name: "one provider of two failed",
      method: "GET",
      path: "/v1/search?q=deadline&providers=notes,broken",
      gateway: "full",
      status: 200,
      code: "partial",
    },
    {
      name: "one provider of two failed, streamed as SSE",
      method: "GET",
      path: "/v1/search?q=deadline&providers=notes,broken&stream=sse",
      gateway: "full",
      status: 200,
      type: "text/event-stream",
    },
    {
      name: "README, a refusal",
      method: "GET",
      path: "/v1/search?q=deadline&limit=0",
      status: 400,
      code: "limit_out_of_range",
      outside: true,
    },
    ...searchRefusals,
    {
      name: "an isolated provider with another",
      method: "GET",
      path: "/v1/search?q=deadline&providers=lone,notes",
      gateway: "full",
      status: 400,
      code: "isolation_conflict",
    },
    {
      name: "a sensitive provider, no token",
      method: "GET",
      path: "/v1/search?q=deadline&providers=private",
      gateway: "full",
      status: 401,
      code: "unauthorized",
    },
    {
      name: "a sensitive provider, a token without its scope",
      method: "GET",
      path: "/v1/search?q=deadline&providers=private",
      gateway: "full",
      token: "plain",
      status: 403,
      code: "insufficient_scope",
    },
    {
      name: "every provider failed",
      method: "GET",
      path: "/v1/search?q=deadline&providers=broken",
      gateway: "full",
      status: 503,
      code: "all_providers_failed",
    },
    {
      name: "past the caller's own limit",
      method: "GET",
      path: "/v1/search?q=deadline&providers=dear",
      gateway: "full",
      status: 429,
      code: "rate_limited",
    },
    {
      name: "past the searches in flight",
      method: "GET",
      path: "/v1/search?q=deadline&providers=notes",
      gateway: "full",
      status: 429,
      code: "overloaded",
      before: holdSlot,
    },
    {
      name: "a parameter that is not UTF-8 once decoded",
      method: "GET",
      path: "/v1/search?q=%FF",
      raw: "send",
      status: 400,
      code: "invalid_utf8",
    },
    {
      name: "request line and headers over 16 KiB",
      method: "GET",
      path: `/v1/search?q=${LONG_QUERY}`,
      raw: "send",
      status: 431,
      code: "headers_too_large",
    },
    ...readRefusals("/v1/search?q=deadline"),
    {
      name: "README, the JSON form",
      method: "POST",
      path: "/v1/search",
      json: { query: "deadline", scope: "auto", limit: 5, view: "merged", timeout_ms: 3000 },
      status: 200,
      code: "ok",
    },
    {
      name: "the JSON form, streamed as NDJSON",
      method: "POST",
      path: "/v1/search",
      headers: { accept: "application/x-ndjson" },
      json: { query: "deadline" },
      status: 200,
      type: "application/x-ndjson",
    },
    {
      name: "a field of the wrong type",
      method: "POST",
      path: "/v1/search",
      json: { query: "deadline", limit: "5" },
      status: 400,
      code: "invalid_field",
      outside: true,
    },
    {
      name: "past the searches in flight",
      method: "POST",
      path: "/v1/search",
      gateway: "full",
      json: { query: "deadline", providers: ["notes"] },
      status: 429,
      code: "overloaded",
      before: holdSlot,
    },
    {
      name: "a sensitive provider, a token without its scope",
      method: "POST",
      path: "/v1/search",
      gateway: "full",
      token: "plain",
      json: { query: "deadline", providers: ["private"] },
      status: 403,
      code: "insufficient_scope",
    },
    ...bodyRefusals("/v1/search", { query: "deadline" }, "default"),
    { name: "a method it does not allow", method: "PUT", path: "/v1/search", status: 405 },
  ],
  "/v1/expand": [
    {
      name: "the evidence behind a locator",
      method: "POST",
      path: "/v1/expand",
      gateway: "full",
      json: { provider: "notes", locator: "https://notes.example/deadlines" },
      status: 200,
      code: "ok",
    },
    ...[
      ["notes", "https://notes.example/never", 404, "locator_unknown"],
      ["nope", "x", 400, "unknown_provider"],
      ["bare", "x", 400, "action_unsupported"],
      ["broken", "x", 502, "provider_failed"],
      ["private", "x", 401, "unauthorized"],
      ["dear", "x", 429, "rate_limited"],
    ].map(([provider, locator, status, code]): ContractCase => ({
      name: code as string,
      method: "POST",
      path: "/v1/expand",
      gateway: "full",
      json: { provider, locator },
      status: status as number,
      code: code as EnvelopeCode,
    })),
    {
      name: "a sensitive provider, a token without its scope",
      method: "POST",
      path: "/v1/expand",
      gateway: "full",
      token: "plain",
      json: { provider: "private", locator: "x" },
      status: 403,
      code: "insufficient_scope",
    },
    {
      name: "a locator whose source has changed",
      method: "POST",
      path: "/v1/expand",
      gateway: "full",
      json: { provider: "notes", locator: "https://notes.example/retries" },
      status: 410,
      code: "locator_expired",
      before: (world) => world.forgetRetries(),
    },
    ...bodyRefusals(
      "/v1/expand",
      { provider: "notes", locator: "https://notes.example/deadlines" },
      "full",
    ),
    { name: "a method it does not allow", method: "GET", path: "/v1/expand", status: 405 },
  ],
  "/v1/refresh": [
    ...[
      ["admin", "notes", 200, "ok"],
      ["plain", "notes", 403, "forbidden"],
      ["admin", "nope", 400, "unknown_provider"],
      ["admin", "bare", 400, "action_unsupported"],
      ["admin", "broken", 502, "provider_failed"],
      ["reader", "private", 403, "forbidden"],
    ].map(([token, provider, status, code]): ContractCase => ({
      name: code as string,
      method: "POST",
      path: "/v1/refresh",
      gateway: "full",
      token: token as TokenName,
      json: { provider },
      status: status as number,
      code: code as EnvelopeCode,
    })),
    ...bodyRefusals("/v1/refresh", { provider: "notes" }, "full"),
    { name: "a method it does not allow", method: "GET", path: "/v1/refresh", status: 405 },
  ],
  "/v1/providers": [
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
  ],
  "/v1/status": [
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
  ],
  "/v1/doctor": [
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
  ],
  "/mcp": [
    {
      name: "initialize",
      method: "POST",
      path: "/mcp",
      headers: MCP_ACCEPT,
      json: MCP_INIT,
      status: 200,
    },
    {
      name: "the tools",
      method: "POST",
      path: "/mcp",
      headers: { ...MCP_ACCEPT, "mcp-protocol-version": "2025-06-18" },
      json: { jsonrpc: "2.0", id: 2, method: "tools/list" },
      status: 200,
    },
    {
      name: "a search with a progress token: its progress and answer as SSE",
      method: "POST",
      path: "/mcp",
      headers: { ...MCP_ACCEPT, "mcp-protocol-version": "2025-06-18" },
      json: {
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: { name: "search", arguments: { query: "deadline" }, _meta: { progressToken: 1 } },
      },
      status: 200,
      type: "text/event-stream",
    },
    {
      name: "a notification",
      method: "POST",
      path: "/mcp",
      headers: MCP_ACCEPT,
      json: { jsonrpc: "2.0", method: "notifications/initialized" },
      status: 202,
    },
    {
      name: "an MCP-Protocol-Version it does not speak",
      method: "POST",
      path: "/mcp",
      headers: { ...MCP_ACCEPT, "mcp-protocol-version": "1999-01-01" },
      json: { jsonrpc: "2.0", id: 2, method: "tools/list" },
      status: 400,
    },
    {
      name: "an Accept it cannot answer",
      method: "POST",
      path: "/mcp",
      headers: { accept: "text/plain" },
      json: MCP_INIT,
      status: 406,
    },
    {
      name: "not JSON's media type",
      method: "POST",
      path: "/mcp",
      headers: { ...MCP_ACCEPT, "content-type": "text/plain" },
      body: "{}",
      status: 415,
      outside: true,
    },
    {
      name: "a browser origin it does not allow",
      method: "POST",
      path: "/mcp",
      headers: { ...MCP_ACCEPT, origin: "http://elsewhere.example" },
      json: MCP_INIT,
      status: 403,
      code: "forbidden",
    },
    {
      name: "no token where one is needed",
      method: "POST",
      path: "/mcp",
      gateway: "locked",
      headers: MCP_ACCEPT,
      json: MCP_INIT,
      status: 401,
      code: "unauthorized",
    },
    {
      name: "keys out of reach",
      method: "POST",
      path: "/mcp",
      gateway: "locked",
      token: "unfetchable",
      headers: MCP_ACCEPT,
      json: MCP_INIT,
      status: 503,
      code: "auth_unavailable",
    },
    { ...FAULT, method: "POST", path: "/mcp", headers: MCP_ACCEPT, json: MCP_INIT },
    { name: "no server stream", method: "GET", path: "/mcp", status: 405 },
    { name: "no session to end", method: "DELETE", path: "/mcp", status: 405 },
  ],
  "/schemas/{name}.json": [
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
  ],
  "/.well-known/jwks.json": [
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
    ...readRefusals("/.well-known/jwks.json", false, "full").filter((c) =>
      c.code !== "unauthorized"
    ),
  ],
  "/page/{name}": [
    { name: "the script", method: "GET", path: "/page/app.js", status: 200 },
    { name: "the style sheet", method: "GET", path: "/page/app.css", status: 200 },
    { name: "the icon", method: "GET", path: "/page/icon.svg", status: 200 },
    { name: "headers only", method: "HEAD", path: "/page/app.js", status: 200 },
    { name: "no such file", method: "GET", path: "/page/nope.txt", status: 404, code: "not_found" },
    { name: "a method it does not allow", method: "POST", path: "/page/app.js", status: 405 },
    ...readRefusals("/page/app.js", true),
  ],
  "/openapi.json": [
    { name: "README", method: "GET", path: "/openapi.json", status: 200 },
    { name: "headers only", method: "HEAD", path: "/openapi.json", status: 200 },
    { name: "a method it does not allow", method: "POST", path: "/openapi.json", status: 405 },
    ...readRefusals("/openapi.json", true),
  ],
  "/docs": [
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
  ],
  "/docs/scalar.js": [
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
  ],
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
