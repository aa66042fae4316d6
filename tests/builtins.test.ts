/**
 * The `exa` and `github` built-ins against recorded answers (tests/fixtures/recordings: hand-made
 * from the public API documentation, not captured) replayed from 127.0.0.1 with the base URL
 * overridden; then through a gateway, where only the manifest decides whether they run.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { builtinAdapters, exaAdapter, githubAdapter } from "../src/builtins/mod.ts";
import { readSettings } from "../src/config/settings.ts";
import { ByteBudget } from "../src/io/byte-budget.ts";
import { inProcessProvider } from "../src/transport/in-process-provider.ts";
import type { SearchAdapter } from "../src/protocol/provider-contract.ts";
import { assertEnvelope, gateway, search } from "./support/gateway.ts";
import { answer, type Handler, raw, startServer, type TestServer } from "./support/servers.ts";

type Recording = {
  request: { method: string; path: string };
  response: { status: number; headers: Record<string, string>; body: unknown };
};

const recording = (name: string): Recording =>
  JSON.parse(readFileSync(new URL(`./fixtures/recordings/${name}.json`, import.meta.url), "utf8"));

/** Serves each recording at its method and path; anything else is a 404. */
function replay(...names: string[]): Handler {
  const routes = new Map(names.map((name) => {
    const r = recording(name);
    return [`${r.request.method} ${r.request.path}`, r.response] as const;
  }));
  return (req, res) => {
    const found = routes.get(`${req.method} ${new URL(req.url ?? "/", "http://x").pathname}`);
    res.writeHead(found?.status ?? 404, found?.headers ?? { "content-type": "application/json" });
    res.end(JSON.stringify(found?.body ?? { message: "Not Found" }));
  };
}

const KEY = "exa-test-key-5e1f0c9d2b7a4e38";
const TOKEN = `ghp_${"T0k3n".repeat(8)}`;
const RESET_CLOCK = () => 1_700_000_000_000;

async function withServer<T>(handler: Handler, run: (s: TestServer, base: string) => Promise<T>) {
  const server = await startServer(handler);
  try {
    return await run(server, `http://127.0.0.1:${server.port}`);
  } finally {
    await server.close();
  }
}

/** One attempt through the in-process transport, as the gateway makes it. */
function attempt(adapter: SearchAdapter) {
  return inProcessProvider(adapter).call({
    query: "large language models",
    limit: 8,
    requestId: "test",
    traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    signal: AbortSignal.timeout(5_000),
    budget: new ByteBudget(16_000_000),
    connectGate: null,
  });
}

function assertFailure(result: unknown, expected: Record<string, unknown>, secret = KEY) {
  const r = result as Record<string, unknown>;
  assert.equal(r.kind, "failure", JSON.stringify(r));
  for (const [k, want] of Object.entries(expected)) {
    assert.equal(r[k], want, `${k} in ${JSON.stringify(r)}`);
  }
  assert.ok(!String(r.message).includes(secret), "the key is in no message");
  assert.ok(!/127\.0\.0\.1|localhost/.test(String(r.message)), "no message names the host");
}

describe("exa built-in", () => {
  it("maps a recorded search: titles, locators, snippets, dates, metadata and the cost", async () => {
    await withServer(replay("exa-search"), async (server, baseUrl) => {
      const out = await exaAdapter({ apiKey: KEY, baseUrl }).search(
        { query: "large language models", limit: 5 },
        AbortSignal.timeout(5_000),
      );
      const [req] = server.requests;
      assert.equal(server.requests.length, 1);
      assert.equal(req?.method, "POST");
      assert.equal(req?.url, "/search");
      assert.equal(req?.headers["x-api-key"], KEY);
      assert.match(String(req?.headers["content-type"]), /^application\/json/);
      assert.deepEqual(JSON.parse(req?.body ?? ""), {
        query: "large language models",
        numResults: 5,
        type: "auto",
        contents: { highlights: { maxCharacters: 1600 } },
      });
      assert.equal(out.cost_micros, 7_000);
      const [first, second, third] = out.candidates;
      assert.equal(first?.title, "A Comprehensive Overview of Large Language Models");
      assert.equal(first?.locator, "https://arxiv.org/pdf/2307.06435.pdf");
      assert.match(String(first?.snippet), /^Such requirements .* … Large Language Models/);
      assert.equal(first?.published_at, "2023-11-16T01:36:32.547Z");
      assert.deepEqual(first?.metadata, {
        author: "Humza  Naveed, University of Engineering and Technology (UET), Lahore, Pakistan",
        highlight_scores: [0.4600165784358978, 0.3911402821540833],
      });
      assert.equal(second?.locator, "https://arxiv.org/pdf/2303.17580.pdf");
      // No title: the URL stands in; no highlights: no snippet; a score goes to metadata.
      assert.equal(third?.title, "https://example.org/notes/llm-survey");
      assert.equal(third?.snippet, null);
      assert.equal(third?.published_at, null);
      assert.deepEqual(third?.metadata, { score: 0.1784 });
    });
  });

  const FAILED = { outcome: "search_failed", code: "search_failed" };
  /** A malformed answer would come back the same on a retry. */
  const MALFORMED = { ...FAILED, retryable: false };
  const json = (body: unknown) => raw(200, JSON.stringify(body));
  const failures: Array<[string, Handler, Record<string, unknown>]> = [
    ["a 429 is rate_limited with the Retry-After wait", replay("exa-429"), {
      outcome: "search_failed",
      code: "rate_limited",
      retryable: true,
      retry_after_ms: 2_000,
    }],
    [
      "a 401 (key rejected) is adapter_unavailable, not retryable: an operator must act",
      replay("exa-401"),
      {
        outcome: "adapter_unavailable",
        code: "adapter_unavailable",
        retryable: false,
      },
    ],
    ["a 500 is search_failed and retryable", replay("exa-500"), { ...FAILED, retryable: true }],
    ["a body that is not JSON is an honest failure", raw(200, '{"results": ['), MALFORMED],
    [
      "a body that is not UTF-8 is an honest failure",
      raw(200, Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d])),
      MALFORMED,
    ],
    [
      "a body over the cap is cancelled and not retried",
      raw(200, `{"results": [], "pad": "${"x".repeat(2_100_000)}"}`),
      MALFORMED,
    ],
    [
      "an answer without results is no empty success",
      json({ costDollars: { total: 1 } }),
      MALFORMED,
    ],
    ["a result without a url is an honest failure", json({ results: [{ title: "t" }] }), MALFORMED],
    [
      "an HTML page is a failure",
      raw(200, "<p>", { "content-type": "text/html" }),
      FAILED,
    ],
    ["a redirect is never followed", raw(302, "", { location: "http://127.0.0.1:9/" }), FAILED],
  ];
  for (const [name, handler, expected] of failures) {
    it(name, async () => {
      await withServer(handler, async (server, baseUrl) => {
        assertFailure(await attempt(exaAdapter({ apiKey: KEY, baseUrl })), expected);
        assert.equal(server.requests.length, 1);
      });
    });
  }

  it("a refused connection is adapter_unavailable, naming no host or port", async () => {
    const closed = await startServer(() => {});
    await closed.close();
    const adapter = exaAdapter({ apiKey: KEY, baseUrl: `http://127.0.0.1:${closed.port}` });
    assertFailure(await attempt(adapter), { outcome: "adapter_unavailable", retryable: true });
  });
});

describe("github built-in", () => {
  it("searches repositories and issues, maps both, interleaves them and caps at the limit", async () => {
    const handler = replay("github-search-repositories", "github-search-issues");
    await withServer(handler, async (server, baseUrl) => {
      const out = await githubAdapter({ token: TOKEN, baseUrl }).search(
        { query: "tetris", limit: 3 },
        AbortSignal.timeout(5_000),
      );
      const sent = new Map(server.requests.map((r) => [new URL(r.url, baseUrl), r] as const));
      assert.deepEqual([...sent.keys()].map((u) => u.pathname).sort(), [
        "/search/issues",
        "/search/repositories",
      ]);
      for (const [url, req] of sent) {
        const { authorization, accept, "x-github-api-version": version, "user-agent": ua } =
          req.headers;
        assert.deepEqual([req.method, authorization, accept, version, ua], [
          "GET",
          `Bearer ${TOKEN}`,
          "application/vnd.github+json",
          "2022-11-28",
          "tracefetch-edge",
        ]);
        assert.equal(url.searchParams.get("per_page"), "3");
        const q = url.pathname === "/search/issues" ? "tetris is:issue" : "tetris";
        assert.equal(url.searchParams.get("q"), q);
      }
      assert.deepEqual(out.candidates.map((c) => c.locator), [
        "https://github.com/dtrupenn/Tetris",
        "https://github.com/batterseapower/pinyin-toolkit/issues/132",
        "https://github.com/octocat/Hello-World",
      ]);
      const [repo, issue, noPush] = out.candidates;
      assert.deepEqual({ ...repo, metadata: { ...repo?.metadata } }, {
        title: "dtrupenn/Tetris",
        locator: "https://github.com/dtrupenn/Tetris",
        snippet: "A C implementation of Tetris using Pennsim through LC4",
        published_at: "2012-01-01T00:37:02Z",
        metadata: { kind: "repository", stars: 1, forks: 0, language: "Assembly" },
      });
      assert.equal(issue?.title, "Line Number Indexes Beyond 20 Not Displayed");
      assert.match(String(issue?.snippet), /^Line numbers beyond 20/);
      assert.equal(issue?.published_at, "2009-07-12T20:10:41Z");
      assert.deepEqual(issue?.metadata, {
        kind: "issue",
        repository: "batterseapower/pinyin-toolkit",
        number: 132,
        state: "open",
        comments: 15,
      });
      assert.equal(noPush?.published_at, "2011-01-26T19:14:43Z", "updated_at when never pushed");
      assert.deepEqual(out.warnings, [
        "GitHub's issues search hit its time limit; the results may be incomplete",
      ]);
    });
  });

  it("marks pull requests and sends a query that names its type unchanged", async () => {
    await withServer(replay("github-search-issues"), async (server, baseUrl) => {
      const adapter = githubAdapter({ token: TOKEN, baseUrl, kind: "issues" });
      const out = await adapter.search({ query: "is:pr x", limit: 8 }, AbortSignal.timeout(5_000));
      const sent = new URL(server.requests[0]?.url ?? "", baseUrl);
      assert.equal(sent.searchParams.get("q"), "is:pr x");
      assert.equal(out.candidates[1]?.metadata?.kind, "pull_request");
      assert.equal(out.candidates[1]?.snippet, null);
    });
  });

  it("a 403 with x-ratelimit-remaining 0 is rate_limited until x-ratelimit-reset", async () => {
    await withServer(replay("github-403-rate-limited"), async (_server, baseUrl) => {
      const adapter = githubAdapter({ token: TOKEN, baseUrl, kind: "both", now: RESET_CLOCK });
      assertFailure(await attempt(adapter), {
        outcome: "search_failed",
        code: "rate_limited",
        retryable: true,
        retry_after_ms: 60_000,
      }, TOKEN);
    });
  });

  it("a 401 (bad credentials) is adapter_unavailable and names no token", async () => {
    await withServer(replay("github-401-bad-credentials"), async (_server, baseUrl) => {
      const adapter = githubAdapter({ token: TOKEN, baseUrl, kind: "repositories" });
      assertFailure(
        await attempt(adapter),
        { outcome: "adapter_unavailable", retryable: false },
        TOKEN,
      );
    });
  });
});

/** The adapters a composition root builds: keys parsed by readSettings, then builtinAdapters. */
const adaptersOf = (env: Record<string, string>) => builtinAdapters(readSettings(env).env.builtins);

describe("built-in keys, read with the other settings", () => {
  it("creates an adapter only for a key that is set, and refuses an unsafe base URL", () => {
    assert.deepEqual(Object.keys(adaptersOf({})), []);
    assert.deepEqual(Object.keys(adaptersOf({ EXA_API_KEY: KEY, GITHUB_TOKEN: " " })), ["exa"]);
    assert.deepEqual(Object.keys(adaptersOf({ GITHUB_TOKEN: TOKEN })), ["github"]);
    const refused: Array<[Record<string, string>, RegExp]> = [
      [{ EXA_BASE_URL: "http://127.0.0.1:1234" }, /EXA_BASE_URL .*TRACEFETCH_ALLOW_LOOPBACK=1/],
      [{ GITHUB_API_URL: "http://api.example.com" }, /GITHUB_API_URL must use https:/],
      [{ EXA_BASE_URL: "api.exa.ai" }, /EXA_BASE_URL must be an absolute URL/],
      [{ EXA_BASE_URL: "https://user:pw@api.exa.ai" }, /EXA_BASE_URL must not carry credentials/],
      [{ EXA_API_KEY: "key\u0001" }, /EXA_API_KEY contains a control character/],
    ];
    for (const [env, message] of refused) {
      assert.throws(() => adaptersOf(env), message);
    }
    const loopback = { EXA_BASE_URL: "http://127.0.0.1:1234", TRACEFETCH_ALLOW_LOOPBACK: "1" };
    assert.deepEqual(Object.keys(adaptersOf({ ...loopback, EXA_API_KEY: KEY })), ["exa"]);
  });
});

describe("built-ins through the gateway: the manifest decides", () => {
  const EXA = { name: "exa", scope: "web", cost_micros: 1 };
  const envFor = (base: string, extra: Record<string, string> = {}) => ({
    EXA_BASE_URL: base,
    TRACEFETCH_ALLOW_LOOPBACK: "1",
    ...extra,
  });

  it("listed without EXA_API_KEY: skipped as not_configured, status says so, nothing is sent", async () => {
    const other = await startServer(answer("other", "other", []));
    await withServer(replay("exa-search"), async (server, base) => {
      const builtins = adaptersOf(envFor(base));
      const app = gateway([EXA, { name: "other", endpoint: other.url }], { ports: { builtins } });
      const skipped = (await search(app)).body.result.decision.skipped;
      assert.deepEqual(skipped, [{ provider: "exa", reason: "not_configured" }]);
      const status = assertEnvelope(await (await app.request("/v1/status")).json());
      const exa = status.result.providers.find((p: { name: string }) => p.name === "exa");
      assert.equal(exa.state, "not_configured");
      assert.equal(server.requests.length, 0);
    }).finally(() => other.close());
  });

  it("EXA_API_KEY set but exa not listed: nothing is sent", async () => {
    const other = await startServer(answer("other", "other", []));
    await withServer(replay("exa-search"), async (server, base) => {
      const builtins = adaptersOf(envFor(base, { EXA_API_KEY: KEY }));
      const app = gateway([{ name: "other", endpoint: other.url }], { ports: { builtins } });
      assert.equal((await search(app)).body.code, "ok");
      assert.equal(server.requests.length, 0);
    }).finally(() => other.close());
  });

  it("listed with its key: a success whose cost comes from Exa, in the attempt and the usage", async () => {
    await withServer(replay("exa-search"), async (server, base) => {
      const builtins = adaptersOf(envFor(base, { EXA_API_KEY: KEY }));
      const { body, text } = await search(gateway([EXA], { ports: { builtins } }), {
        q: "llm survey",
      });
      assert.equal(body.code, "ok");
      const [exa] = body.result.candidates;
      assert.equal(exa.outcome, "success");
      assert.equal(exa.candidate_count, 3);
      assert.equal(exa.cost_micros, 7_000);
      assert.equal(body.result.usage.cost_micros, 7_000);
      assert.equal(server.requests.length, 1);
      assert.ok(!text.includes(KEY), "the key never reaches the caller");
    });
  });
});
