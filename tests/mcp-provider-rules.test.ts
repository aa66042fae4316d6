/**
 * An MCP provider under every rule a provider meets, against a scripted MCP server on 127.0.0.1:
 * the session kept per gateway (its tool list with it) and opened again when forgotten, the argument
 * template, SSE and text-block answers, the candidates' bounds, deadlines, the body cap, redaction,
 * suspension through the gateway's probe, and the credentials each auth sends.
 */
import { after, before, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { decodeJwt } from "jose";
import { gateway, search } from "./support/gateway.ts";
import { type ScriptedMcp, startScriptedMcp } from "./support/scripted-mcp.ts";
import { keyPair } from "./support/auth-keys.ts";
import {
  MAX_DIAGNOSTIC_CHARS,
  MAX_TITLE_CHARS,
  TRUNCATION_MARKER,
} from "../src/protocol/limits.ts";
import { clock, shownAs, withApp } from "./support/suspension-fixture.ts";

/** Time given the answer cache's write, which lands after the answer: ample for the memory cache. */
const CACHE_WRITE_MS = 250;

const mapping = {
  tool: "find",
  arguments: { q: "{query}", n: "{limit}", filter: { site: "docs {query}" }, tags: ["{query}"] },
  results: "hits",
  fields: { title: "t", locator: "u", snippet: "s.lines", published_at: "when" },
};
const hits = [
  {
    t: "First",
    u: "https://docs.example/1",
    s: { lines: ["one", "two"] },
    when: "2026-01-02T00:00:00Z",
  },
  { t: "Second", u: "https://docs.example/2", s: { lines: [] } },
];

describe("an MCP provider under the gateway's rules", () => {
  let server: ScriptedMcp;
  const entry = (extra: Record<string, unknown> = {}) => ({
    name: "tool",
    transport: "mcp",
    endpoint: server.endpoint,
    mcp: mapping,
    ...extra,
  });

  before(async () => {
    server = await startScriptedMcp();
  });
  after(() => server.close());
  beforeEach(() => {
    server.tool.answer = () => ({ structuredContent: { hits }, content: [] });
    server.tool.sse = false;
    server.tool.keepOpen = false;
    server.tool.delayMs = 0;
    server.calls.length = 0;
  });

  it("fills the argument template with the query and the limit as a number", async () => {
    const { body } = await search(gateway([entry()]), { q: "deadline", limit: "7" });
    assert.equal(body.code, "ok");
    assert.deepEqual(server.calls[0]?.args, {
      q: "deadline",
      n: 7,
      filter: { site: "docs deadline" },
      tags: ["deadline"],
    });
    const [attempt] = body.result.candidates;
    assert.equal(attempt.candidate_count, 2);
    const first = body.result.merged[0];
    assert.equal(first.title, "First");
    assert.equal(first.snippet, "one two", "a list's items joined with a space");
    assert.equal(first.published_at, "2026-01-02T00:00:00Z");
  });

  it("keeps one session per gateway, sends its id, and opens a new one when the server forgets", async () => {
    const app = gateway([entry()]);
    const before = server.sessionsOpened();
    await search(app, { q: "one" });
    await search(app, { q: "two" });
    assert.equal(server.sessionsOpened(), before + 1, "the second search reuses the session");
    const id = `s-${before + 1}`;
    assert.equal(server.calls[1]?.headers["mcp-session-id"], id);
    assert.equal(server.calls[1]?.headers["mcp-protocol-version"], "2025-06-18");
    server.forget();
    const { body } = await search(app, { q: "three" });
    assert.equal(body.code, "ok", JSON.stringify(body.result.candidates));
    assert.equal(server.sessionsOpened(), before + 2, "opened again after the 404");
    assert.equal(server.calls.at(-1)?.headers["mcp-session-id"], `s-${before + 2}`);
  });

  it("a session that failed to open is not kept: the next search opens one", async () => {
    server.refuseOpenings.count = 1;
    const app = gateway([entry()]);
    const first = await search(app, { q: "one" });
    assert.equal(first.body.result.candidates[0].outcome, "search_failed");
    assert.equal(first.body.result.candidates[0].retryable, true, "a 503 may pass");
    const second = await search(app, { q: "two" });
    assert.equal(second.body.code, "ok", JSON.stringify(second.body.result.candidates));
  });

  it("asks tools/list once per session: later searches call the tool alone", async () => {
    const app = gateway([entry()]);
    const listed = () => server.requests.filter((r) => r.body.includes('"tools/list"')).length;
    const before = listed();
    for (const q of ["one", "two", "three"]) await search(app, { q });
    assert.equal(server.calls.length, 3);
    assert.equal(listed(), before + 1, "the tool list is kept with the session");
  });

  it("its candidates are bounded and stamped as any provider's: whitespace collapsed, a long title cut", async () => {
    server.tool.answer = () => ({
      structuredContent: {
        hits: [
          { t: "  Spaced\n\ttitle  ", u: "https://docs.example/s", s: { lines: ["a", "b"] } },
          { t: "long ".repeat(100), u: "https://docs.example/l", s: { lines: [] } },
        ],
      },
    });
    const { body } = await search(gateway([entry()]), { q: "deadline" });
    assert.equal(body.code, "ok", JSON.stringify(body.result.candidates));
    const [spaced, long] = body.result.merged;
    assert.equal(spaced.title, "Spaced title");
    assert.ok(long.title.length <= MAX_TITLE_CHARS, `${long.title.length} characters`);
    assert.ok(long.title.endsWith(TRUNCATION_MARKER), long.title);
    assert.deepEqual(spaced.found_by, ["tool"]);
  });

  it("reads an SSE answer, and the first text block's JSON when there is no structuredContent", async () => {
    server.tool.sse = true;
    server.tool.answer = () => ({ content: [{ type: "text", text: JSON.stringify({ hits }) }] });
    const { body } = await search(gateway([entry()]), { q: "deadline" });
    assert.equal(body.code, "ok");
    assert.equal(body.result.merged.length, 2);
  });

  it("an SSE answer the server never ends is read up to its response, which may split a character", async () => {
    server.tool.sse = true;
    server.tool.keepOpen = true;
    const accented = [{ t: "Café über 東京", u: "https://docs.example/3", s: { lines: ["ü"] } }];
    server.tool.answer = () => ({ structuredContent: { hits: accented }, content: [] });
    const cutBefore = server.streamsCutByClient();
    const started = performance.now();
    const { body } = await search(gateway([entry({ timeout_seconds: 20 })]), { q: "deadline" });
    assert.equal(body.code, "ok", JSON.stringify(body.result?.providers));
    assert.equal(body.result.merged[0].title, "Café über 東京");
    // Well inside the provider's 20 s: the read stopped at the response, not at a timeout.
    assert.ok(performance.now() - started < 10_000);
    // The gateway gave the rest of the stream up: the server saw its connection close.
    const until = Date.now() + 5_000;
    while (server.streamsCutByClient() === cutBefore && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(server.streamsCutByClient(), cutBefore + 1);
  });

  it("a text block that is not JSON, with no structuredContent, is a schema violation", async () => {
    server.tool.answer = () => ({ content: [{ type: "text", text: "Found 2 pages: ..." }] });
    const { body } = await search(gateway([entry()]), { q: "deadline" });
    const [attempt] = body.result.candidates;
    assert.equal(attempt.code, "schema_violation");
    assert.equal(body.code, "all_providers_failed");
  });

  it("isError is search_failed with the tool's text redacted and bounded, never an empty success", async () => {
    server.tool.answer = () => ({
      isError: true,
      content: [{ type: "text", text: "upstream refused key sk-live-abcdefghijklmnopqrstuvwx" }],
    });
    const { body } = await search(gateway([entry()]), { q: "deadline" });
    const [attempt] = body.result.candidates;
    assert.equal(attempt.outcome, "search_failed");
    assert.match(attempt.message, /isError: upstream refused key/);
    assert.doesNotMatch(attempt.message, /abcdefghijklmnopqrstuvwx/);
    server.tool.answer = () => ({
      isError: true,
      content: [{ type: "text", text: "x".repeat(9_000) }],
    });
    const long = await search(gateway([entry()]), { q: "long" });
    const bounded = long.body.result.candidates[0];
    assert.equal(bounded.outcome, "search_failed");
    assert.ok(
      bounded.message.length <= MAX_DIAGNOSTIC_CHARS,
      `${bounded.message.length} characters`,
    );
  });

  it("a provider timeout cancels a held tools/call: a timeout, not a hang", async () => {
    server.tool.answer = undefined;
    const { body } = await search(gateway([entry({ timeout_seconds: 0.5 })]), { q: "deadline" });
    const [attempt] = body.result.candidates;
    assert.equal(attempt.outcome, "timeout");
    assert.equal(attempt.budget, "provider_timeout");
  });

  it("the caller's deadline cancels a held tools/call: a timeout charged to the caller", async () => {
    server.tool.answer = undefined;
    const { body } = await search(gateway([entry()]), { q: "deadline", timeout_ms: "500" });
    const [attempt] = body.result.candidates;
    assert.equal(attempt.outcome, "timeout");
    assert.equal(attempt.budget, "caller_deadline");
  });

  it("a tool answer past the body cap is body_too_large", async () => {
    const big = "x".repeat(1_000);
    server.tool.answer = () => ({
      structuredContent: {
        hits: Array.from({ length: 2_100 }, (_, i) => ({ t: big, u: `u${i}` })),
      },
    });
    const { body } = await search(gateway([entry()]), { q: "deadline" });
    assert.equal(body.result.candidates[0].code, "body_too_large");
  });

  it("auth bearer sends the named variable's value; gateway-token sends a token minted for the provider", async () => {
    const bearer = gateway([entry({ auth: { type: "bearer", secret: "MCP_TOOL_KEY" } })], {
      env: { MCP_TOOL_KEY: "k-123" },
    });
    await search(bearer, { q: "deadline" });
    assert.equal(server.calls.at(-1)?.headers.authorization, "Bearer k-123");
    const signing = await keyPair("EdDSA", "gw-1");
    const minted = gateway([entry({ auth: { type: "gateway-token" } })], {
      env: {
        TRACEFETCH_SIGNING_JWK: JSON.stringify(signing.privateJwk),
        TRACEFETCH_GATEWAY_ISSUER: "https://gateway.example",
      },
    });
    const { body } = await search(minted, { q: "deadline" });
    assert.equal(body.code, "ok", JSON.stringify(body.result.candidates));
    const header = String(server.calls.at(-1)?.headers.authorization);
    assert.match(header, /^Bearer /);
    const claims = decodeJwt(header.slice(7));
    assert.equal(claims.aud, "tool");
    assert.equal(claims.iss, "https://gateway.example");
  });

  it("cost and the cache apply: a cached MCP answer is served without a call", async () => {
    const app = gateway([entry({ cost_micros: 300, cache_ttl_seconds: 60 })]);
    const first = await search(app, { q: "cached" });
    assert.equal(first.body.result.usage.cost_micros, 300);
    const calls = server.calls.length;
    // The cache is written after the answer is sent.
    await new Promise((resolve) => setTimeout(resolve, CACHE_WRITE_MS));
    const second = await search(app, { q: "cached" });
    assert.equal(server.calls.length, calls, "no second tools/call");
    assert.equal(second.body.result.candidates[0].cached, true);
  });

  it("five failed calls and a failed probe suspend it; a probe through the tool that answers ends it", async () => {
    server.tool.answer = () => ({ isError: true, content: [{ type: "text", text: "down" }] });
    const c = clock();
    const app = withApp([entry()], c);
    for (let i = 0; i < 5; i++) await search(app, { q: `down ${i}` });
    await shownAs(app, "tool", "suspended");
    assert.deepEqual(server.calls.at(-1)?.args.q, "search", "the gateway's probe is a tools/call");
    const calls = server.calls.length;
    const during = await search(app, { q: "during" });
    assert.equal(during.body.result.decision.skipped[0]?.reason, "suspended");
    assert.equal(server.calls.length, calls, "no tools/call while suspended");
    server.tool.answer = () => ({ structuredContent: { hits }, content: [] });
    c.t += 120_000;
    await search(app, { q: "after" });
    await shownAs(app, "tool", "ready");
    assert.equal((await search(app, { q: "back" })).body.code, "ok");
  });

  it("max_concurrency bounds the tools/call requests open at once; identical searches share one", async () => {
    server.tool.delayMs = 100;
    const bounded = gateway([entry({ max_concurrency: 1 })]);
    const bodies = await Promise.all(
      ["one", "two", "three"].map((q) => search(bounded, { q }).then((r) => r.body)),
    );
    assert.ok(bodies.every((b) => b.code === "ok"), JSON.stringify(bodies.map((b) => b.code)));
    assert.equal(server.mostAtOnce(), 1, "one tools/call at a time");
    server.calls.length = 0;
    const shared = gateway([entry()]);
    await Promise.all([1, 2, 3].map(() => search(shared, { q: "same" })));
    assert.equal(server.calls.length, 1, "coalesced into one call");
  });
});
