/**
 * The MCP endpoint's acceptance cases, shared by every runtime (tests/mcp.test.ts on Node and Deno,
 * tests/workerd/mcp.test.ts): an SDK `Client` over `StreamableHTTPClientTransport`, real HTTP to a
 * gateway serving the embedded default's three providers and a sensitive `private` provider.
 */
import { it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
// For Deno, which does not find these subpaths' types by itself (see src/http/mcp/mcp-endpoint.ts).
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import * as v from "valibot";
import type { Listen } from "../../src/kit/mod.ts";
import { MAX_MCP_SNIPPET_CHARS } from "../../src/protocol/limits.ts";
import { MCP_TOOLS } from "../../src/protocol/mcp-tools.ts";
import { cutSnippet } from "../../src/http/mcp/mcp-text.ts";
import { startEmbeddedDefault } from "../../providers/corpus/embedded-default.ts";
import { answer, startServer, type TestServer } from "./servers.ts";
import { type Collector, startCollector } from "./mining-fixture.ts";
import { AUDIENCE, ISSUER, keyPair, sign } from "./auth-keys.ts";
import { assertEnvelope } from "./gateway.ts";

/** An origin the gateway lists in TRACEFETCH_MCP_ORIGINS; any other non-loopback one is foreign. */
export const LISTED_ORIGIN = "https://app.example";
const FOREIGN_ORIGIN = "https://rebound.example";

type ToolDefinition = { name: string; inputSchema: object; outputSchema: object };
const TOOLS = (JSON.parse(
  readFileSync(new URL("../../schemas/mcp-tools.json", import.meta.url), "utf8"),
) as { tools: ToolDefinition[] }).tools;

const ajv = new Ajv2020({ allErrors: true, strict: false });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);
const outputValidators = new Map(TOOLS.map((t) => [t.name, ajv.compile(t.outputSchema)]));

/**
 * Asserts `value` validates against the tool's outputSchema as schemas/mcp-tools.json has it (the
 * shallow one clients check) and against the whole valibot schema it was made from.
 */
// deno-lint-ignore no-explicit-any
export function assertToolOutput(tool: string, value: unknown): any {
  const validate = outputValidators.get(tool);
  assert.ok(validate, `no tool ${tool}`);
  assert.ok(
    validate(value),
    `${tool}: not valid output: ${JSON.stringify(validate.errors)}\n${
      JSON.stringify(value).slice(0, 2000)
    }`,
  );
  const whole = MCP_TOOLS.find((t) => t.name === tool)?.output;
  assert.ok(whole, `no tool ${tool}`);
  const parsed = v.safeParse(whole, value);
  assert.ok(
    parsed.success,
    `${tool}: ${JSON.stringify(parsed.issues?.[0]?.path?.map((p) => p.key))} ${
      parsed.issues?.[0]?.message
    }`,
  );
  return value;
}

/** What a model is told per tools/list, at most: the six tools, schemas and all (about 2,000 each). */
export const MAX_TOOLS_LIST_CHARS = 12_000;

/** A search of `limit` 10 on the embedded default, as the text block gives it, at most. */
export const MAX_SEARCH_TEXT_CHARS = 4_000;

/** What a gateway under test is given, and what the cases need to know of it. */
export type McpSetup = {
  env: Record<string, string>;
  /** A caller token granting `tracefetch:private`. */
  entitled: string;
  /** The sensitive provider's server: its requests show whether it was reached. */
  privateProvider: TestServer;
  /** The trace webhook: every search's trace, signed, lands here. */
  traces: Collector;
  close: () => Promise<void>;
};

/**
 * The embedded default's providers (the workspace built-in and two corpus providers over HTTP on
 * loopback) plus `private`, an account-visible provider, with caller tokens and provider tokens,
 * recording search traces to a webhook (the one sink every runtime has).
 */
export async function mcpSetup(listen: Listen): Promise<McpSetup> {
  const [caller, signing] = await Promise.all([
    keyPair("EdDSA", "caller-1"),
    keyPair("EdDSA", "gateway-1"),
  ]);
  const embedded = await startEmbeddedDefault(listen);
  const privateProvider = await startServer(
    answer("private", "private", [{ title: "Private page", locator: "https://intra.example/1" }]),
  );
  const traces = await startCollector();
  const manifest = embedded.manifest as { providers: unknown[] };
  manifest.providers.push({
    name: "private",
    scope: "private",
    endpoint: privateProvider.url,
    sensitivity: "account-visible",
    auth: { type: "gateway-token" },
  });
  return {
    env: {
      TRACEFETCH_MANIFEST: JSON.stringify(manifest),
      TRACEFETCH_ALLOW_LOOPBACK: "1",
      // Only searches reach the providers: their requests count what a call contacted.
      TRACEFETCH_DESCRIBE_PROVIDERS: "off",
      TRACEFETCH_AUTH_JWKS: JSON.stringify({ keys: [caller.publicJwk] }),
      TRACEFETCH_AUTH_ISSUER: ISSUER,
      TRACEFETCH_AUTH_AUDIENCE: AUDIENCE,
      TRACEFETCH_SIGNING_JWK: JSON.stringify(signing.privateJwk),
      TRACEFETCH_GATEWAY_ISSUER: "https://gateway.example",
      TRACEFETCH_MCP_ORIGINS: LISTED_ORIGIN,
      TRACEFETCH_TRACE_WEBHOOK: traces.url,
      TRACEFETCH_TRACE_SECRET: "t".repeat(32),
      TRACEFETCH_MINING_CONFIRMED: "1",
    },
    entitled: await sign(caller, { scope: "tracefetch:private" }),
    privateProvider,
    traces,
    close: async () => {
      await traces.close();
      await privateProvider.close();
      await embedded.close();
    },
  };
}

/** An SDK client connected to `/mcp`, sending `headers` on every request. */
export async function connect(mcp: URL, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: "tracefetch-tests", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(mcp, { requestInit: { headers } }));
  return client;
}

/**
 * One JSON-RPC message POSTed by hand, with the headers MCP requires of a client; a string is the
 * body as written, for keys an object literal cannot make (`__proto__` sets its prototype).
 */
export function rpc(
  mcp: URL,
  message: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(mcp, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body: typeof message === "string" ? message : JSON.stringify(message),
  });
}

/** An MCP `initialize` request, as a client opens a session. */
export const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "tracefetch-tests", version: "1.0.0" },
  },
};

const searchesOf = (server: TestServer) =>
  server.requests.filter((r) => r.body.includes('"query"')).length;

// deno-lint-ignore no-explicit-any
type Structured = any;
type TextBlock = { type: string; text: string };

/** The acceptance cases, against the `/mcp` URL and setup `target()` gives once its `before` ran. */
export function mcpCases(target: () => { mcp: URL; setup: McpSetup }): void {
  const call = async (
    name: string,
    args: Record<string, unknown>,
    headers: Record<string, string> = {},
  ) => {
    const client = await connect(target().mcp, headers);
    try {
      const result = await client.callTool({ name, arguments: args });
      const text = (result.content as TextBlock[])[0]?.text ?? "";
      return { result, text, out: assertToolOutput(name, result.structuredContent) as Structured };
    } finally {
      await client.close();
    }
  };
  const bearer = () => ({ authorization: `Bearer ${target().setup.entitled}` });

  it("lists the six tools, each with an input and an output schema of type object, in at most 12,000 characters", async () => {
    const client = await connect(target().mcp);
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), [
        "expand",
        "fetch",
        "providers",
        "search",
        "status",
        "verify",
      ]);
      for (const tool of tools) {
        assert.equal(tool.inputSchema.type, "object", tool.name);
        assert.equal(tool.outputSchema?.type, "object", tool.name);
        assert.ok((tool.description ?? "").length > 20, tool.name);
      }
      assert.deepEqual(tools, TOOLS, "tools/list answers schemas/mcp-tools.json");
    } finally {
      await client.close();
    }
    const res = await rpc(target().mcp, { jsonrpc: "2.0", id: 9, method: "tools/list" });
    const body = await res.text();
    assert.ok(body.length <= MAX_TOOLS_LIST_CHARS, `tools/list is ${body.length} characters`);
  });

  it("search over the embedded default: structuredContent validates against the outputSchema, with found_by, best_rank and every attempt", async () => {
    const { result, out } = await call("search", { query: "deadline", limit: 5 });
    assert.notEqual(result.isError, true);
    assert.deepEqual([out.ok, out.code, out.action, out.command], [true, "ok", "none", "search"]);
    const { merged, attempts } = out.result;
    assert.ok(merged.length > 0 && merged.length <= 5);
    for (const entry of merged) {
      assert.ok(entry.found_by.length >= 1 && entry.best_rank >= 1, JSON.stringify(entry));
    }
    assert.deepEqual(
      attempts.map((a: { provider: string }) => a.provider).sort(),
      ["engineering", "reference", "workspace"],
    );
    for (const a of attempts) {
      assert.equal(a.outcome, "success");
      assert.equal(a.candidates, undefined, "view merged: a line per attempt, not its list");
    }
  });

  it("search's text is for a model: a line per provider, then each result's rank, title, locator, found_by and a snippet of at most 200 characters; no JSON, at most 4,000 characters for limit 10", async () => {
    const { result, text, out } = await call("search", { query: "deadline", limit: 10 });
    assert.equal((result.content as TextBlock[]).length, 1);
    assert.equal(out.ok, true);
    assert.ok(text.length <= MAX_SEARCH_TEXT_CHARS, `${text.length} characters:\n${text}`);
    assert.match(text, /^search: ok \(action none\)\n"deadline": \d+ results, coverage complete\n/);
    for (const name of ["workspace", "engineering", "reference"]) {
      assert.match(text, new RegExp(`\\nprovider ${name}: \\d+ results? in \\d+ ms\\n`));
    }
    assert.equal(out.result.merged.length, 10);
    for (const entry of out.result.merged) {
      const snippet = cutSnippet(entry.snippet);
      assert.ok(snippet.length <= MAX_MCP_SNIPPET_CHARS, snippet);
      const block = `\n${entry.rank}. ${entry.title}\n   ${entry.locator}\n   found by ${
        entry.found_by.join(", ")
      }\n${snippet === "" ? "" : `   ${snippet}`}`;
      assert.ok(text.includes(block), `entry ${entry.rank} is not in the text:\n${block}`);
    }
    for (const key of ['"request_id"', '"merged"', '"attempts"']) {
      assert.ok(!text.includes(key), `the envelope is not repeated as JSON: ${key}`);
    }
  });

  it("a bad input is isError with the envelope's code and action fix_input, and validates too", async () => {
    for (
      const [args, code] of [
        [{ query: "deadline", limit: 0 }, "limit_out_of_range"],
        [{}, "query_empty"],
        [{ query: "deadline", colour: "red" }, "unknown_field"],
      ] as const
    ) {
      const { result, text, out } = await call("search", args);
      assert.equal(result.isError, true, code);
      assert.deepEqual([out.ok, out.code, out.action], [false, code, "fix_input"]);
      assert.equal(out.result, undefined);
      assert.ok(
        text.startsWith(`search: ${code} (action fix_input)\n${out.error.message}`),
        text,
      );
    }
  });

  it("progress: one notification per provider as it answers, when the call sends a progress token", async () => {
    const client = await connect(target().mcp);
    try {
      const seen: Array<
        { progress: number; total?: number | undefined; message?: string | undefined }
      > = [];
      const result = await client.callTool(
        { name: "search", arguments: { query: "deadline" } },
        undefined,
        { onprogress: (p) => seen.push(p) },
      );
      assertToolOutput("search", result.structuredContent);
      assert.ok(seen.length >= 1, "at least one progress notification");
      assert.deepEqual(seen.map((p) => p.progress), seen.map((_p, i) => i + 1));
      for (const p of seen) {
        assert.equal(p.total, 3);
        assert.match(p.message ?? "", /^(workspace|engineering|reference): /);
      }
    } finally {
      await client.close();
    }
  });

  it("JSON answers by default; an SSE stream only for a call that sends a progress token", async () => {
    const callSearch = (meta: Record<string, unknown>) =>
      rpc(target().mcp, {
        jsonrpc: "2.0",
        id: 7,
        method: "tools/call",
        params: { name: "status", arguments: {}, ...meta },
      });
    const plain = await callSearch({});
    assert.equal(plain.status, 200);
    assert.match(plain.headers.get("content-type") ?? "", /^application\/json/);
    assert.equal(plain.headers.get("mcp-session-id"), null, "stateless: no session");
    const body = await plain.json() as { result: { structuredContent: unknown } };
    assertToolOutput("status", body.result.structuredContent);
    const streamed = await callSearch({ _meta: { progressToken: "p1" } });
    assert.match(streamed.headers.get("content-type") ?? "", /^text\/event-stream/);
    assert.match(await streamed.text(), /"structuredContent"/);
  });

  it("every answer forbids sniffing: JSON, an SSE stream, a parse error and the SDK's own refusal", async () => {
    const call = (meta: Record<string, unknown>) =>
      rpc(target().mcp, {
        jsonrpc: "2.0",
        id: 8,
        method: "tools/call",
        params: { name: "status", arguments: {}, ...meta },
      });
    const notJson = await fetch(target().mcp, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: "{not json",
    });
    const unknownVersion = await rpc(target().mcp, {
      jsonrpc: "2.0",
      id: 9,
      method: "tools/list",
    }, { "mcp-protocol-version": "1999-01-01" });
    const answers = [
      ["JSON", await call({})],
      ["SSE", await call({ _meta: { progressToken: "p2" } })],
      ["parse error", notJson],
      ["unknown protocol version", unknownVersion],
    ] as const;
    for (const [what, res] of answers) {
      await res.body?.cancel();
      assert.equal(res.headers.get("x-content-type-options"), "nosniff", what);
    }
    assert.equal(unknownVersion.status, 400, "the SDK's own refusal");
  });

  it("expand takes a merged entry's found_by and locator; an unknown provider is fix_input", async () => {
    const { out: found } = await call("search", { query: "deadline", providers: ["workspace"] });
    const entry = found.result.merged[0];
    const { out } = await call("expand", { provider: entry.found_by[0], locator: entry.locator });
    assert.deepEqual([out.ok, out.result.evidence.locator], [true, entry.locator]);
    const { result, out: refused } = await call("expand", { provider: "nope", locator: "x" });
    assert.equal(result.isError, true);
    assert.deepEqual([refused.code, refused.action], ["unknown_provider", "fix_input"]);
  });

  it("status and providers answer their routes' envelopes; an argument is unknown_field", async () => {
    const { out: status } = await call("status", {});
    assert.equal(status.result.service, "tracefetch-edge");
    const { out: providers } = await call("providers", {});
    assert.ok(providers.result.providers.length >= 3);
    const { out: refused } = await call("providers", { scope: "notes" });
    assert.deepEqual([refused.code, refused.action], ["unknown_field", "fix_input"]);
  });

  it("a sensitive provider is invisible and unreachable without a token, and searched with an entitled one", async () => {
    const { privateProvider } = target().setup;
    const before = searchesOf(privateProvider);
    const { out: listed } = await call("providers", {});
    assert.ok(!listed.result.providers.some((p: { name: string }) => p.name === "private"));
    const { out: all } = await call("search", { query: "page" });
    assert.ok(!JSON.stringify(all.result.decision).includes("private"), "not even skipped");
    const { result, out: named } = await call("search", { query: "page", providers: ["private"] });
    assert.equal(result.isError, true);
    assert.deepEqual([named.code, named.action], ["unauthorized", "login"]);
    assert.equal(searchesOf(privateProvider), before, "never contacted without a token");

    const { out: entitledList } = await call("providers", {}, bearer());
    assert.ok(entitledList.result.providers.some((p: { name: string }) => p.name === "private"));
    const { out: reached } = await call(
      "search",
      { query: "page", providers: ["private"] },
      bearer(),
    );
    assert.equal(reached.code, "ok");
    assert.equal(reached.result.merged[0].locator, "https://intra.example/1");
    assert.equal(searchesOf(privateProvider), before + 1);
  });

  it("an invalid token is refused with 401 and WWW-Authenticate before any tool runs", async () => {
    const res = await rpc(target().mcp, INITIALIZE, { authorization: "Bearer not.a.token" });
    assert.equal(res.status, 401);
    assert.match(res.headers.get("www-authenticate") ?? "", /^Bearer realm="tracefetch"/);
    assert.equal(assertEnvelope(await res.json()).code, "token_invalid");
    const before = searchesOf(target().setup.privateProvider);
    const search = await rpc(target().mcp, {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "search", arguments: { query: "page" } },
    }, { authorization: "Bearer not.a.token" });
    assert.equal(search.status, 401);
    await search.body?.cancel();
    assert.equal(searchesOf(target().setup.privateProvider), before);
    await assert.rejects(connect(target().mcp, { authorization: "Bearer not.a.token" }));
  });

  it("a foreign Origin is refused with 403 before its token is read; a listed one is served", async () => {
    const before = searchesOf(target().setup.privateProvider);
    const refused = await rpc(target().mcp, {
      jsonrpc: "2.0",
      id: 3,
      method: "tools/call",
      params: { name: "search", arguments: { query: "page", providers: ["private"] } },
    }, { origin: FOREIGN_ORIGIN, ...bearer() });
    assert.equal(refused.status, 403);
    const envelope = assertEnvelope(await refused.json());
    assert.deepEqual([envelope.code, envelope.action], ["forbidden", "check_access"]);
    assert.equal(searchesOf(target().setup.privateProvider), before, "no tool ran");
    const badToken = await rpc(target().mcp, INITIALIZE, {
      origin: FOREIGN_ORIGIN,
      authorization: "Bearer not.a.token",
    });
    assert.equal(badToken.status, 403, "the Origin is checked first");
    await badToken.body?.cancel();
    const getFromForeign = await fetch(target().mcp, { headers: { origin: FOREIGN_ORIGIN } });
    assert.equal(getFromForeign.status, 403);
    await getFromForeign.body?.cancel();
    for (const origin of [LISTED_ORIGIN, "http://127.0.0.1:5173"]) {
      const res = await rpc(target().mcp, INITIALIZE, { origin });
      assert.equal(res.status, 200, origin);
      await res.body?.cancel();
    }
  });

  it("GET and DELETE answer 405 with Allow: POST (stateless: no stream to open, no session to end)", async () => {
    for (const method of ["GET", "DELETE"]) {
      const res = await fetch(target().mcp, { method, headers: { accept: "text/event-stream" } });
      assert.equal(res.status, 405, method);
      assert.equal(res.headers.get("allow"), "POST", method);
      assert.equal(assertEnvelope(await res.json()).code, "method_not_allowed");
    }
  });

  it("MCP-Protocol-Version: a version the SDK does not speak is 400; a supported one is served", async () => {
    const list = { jsonrpc: "2.0", id: 4, method: "tools/list" };
    const old = await rpc(target().mcp, list, { "mcp-protocol-version": "1999-01-01" });
    assert.equal(old.status, 400);
    const error = await old.json() as { error: { message: string } };
    assert.match(error.error.message, /Unsupported protocol version/);
    const current = await rpc(target().mcp, list, { "mcp-protocol-version": "2025-06-18" });
    assert.equal(current.status, 200);
    const { result } = await current.json() as { result: { tools: unknown[] } };
    assert.equal(result.tools.length, 6);
  });

  it("an unknown tool is a JSON-RPC error; a body that is not JSON is a parse error", async () => {
    const client = await connect(target().mcp);
    try {
      await assert.rejects(client.callTool({ name: "crawl", arguments: {} }), /unknown tool/);
    } finally {
      await client.close();
    }
    const res = await fetch(target().mcp, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: "{not json",
    });
    assert.equal(res.status, 400);
    const body = await res.json() as { error: { code: number } };
    assert.equal(body.error.code, -32700);
  });
}
