/**
 * The provider actions beside search (docs/protocol.md, "Actions: describe, health, expand, refresh"): describe, health, expand and
 * refresh, through serveProvider and the HTTP client on 127.0.0.1 and through the in-process
 * client, for the corpus provider, the built-ins over recorded upstreams, the example providers,
 * and providers that predate the actions.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { corpusAdapter, type CorpusDocument } from "../providers/corpus/corpus-adapter.ts";
import { commandBridge } from "../providers/command-bridge/bridge.ts";
import { readCommandManifest } from "../providers/command-bridge/command-manifest.ts";
import { openAlexAdapter, openAlexConfig } from "../providers/papers/openalex-adapter.ts";
import { searxngAdapter, searxngConfig } from "../providers/searxng/searxng-adapter.ts";
import { exaAdapter, githubAdapter, githubLocator } from "../src/builtins/mod.ts";
import { MAX_EXPAND_TEXT_CHARS, TRUNCATION_MARKER } from "../src/protocol/limits.ts";
import { ProviderError, type SearchAdapter } from "../src/protocol/provider-contract.ts";
import { isRfc3339 } from "../src/protocol/provider-actions.ts";
import { ByteBudget } from "../src/io/byte-budget.ts";
import { httpProvider } from "../src/transport/http-provider.ts";
import { exchangeOverFetch } from "../src/io/provider-exchange.ts";
import { inProcessProvider } from "../src/transport/in-process-provider.ts";
import type { ProviderClient } from "../src/transport/provider-client.ts";
import { bothWays } from "./support/both-ways.ts";
import { type Handler, hold, raw, startServer, type TestServer } from "./support/servers.ts";

const call = () => ({ signal: AbortSignal.timeout(5_000), requestId: "actions-test" });

const DOCS: CorpusDocument[] = [
  {
    title: "Deadlines",
    locator: "https://notes.example/deadlines",
    text: "Every call has a deadline.\n\nA deadline that is not propagated is a wish.",
    published_at: "2025-03-01",
  },
  {
    title: "Retries",
    locator: "https://notes.example/retries",
    text: "Retry with jitter, and only what is idempotent.",
    published_at: "2025-06-15",
  },
];

function overHttp(server: TestServer, name = "p", scope = "s"): ProviderClient {
  const exchange = exchangeOverFetch(fetch);
  return httpProvider({ name, scope, endpoint: server.url, exchange, now: () => Date.now() });
}

async function withServer(handler: Handler, run: (s: TestServer) => Promise<void>) {
  const server = await startServer(handler);
  try {
    await run(server);
  } finally {
    await server.close();
  }
}

describe("actions through serveProvider and the HTTP client, and in process: the corpus", () => {
  it("describe lists the actions the adapter implements and protocol_versions [1]", async () => {
    const fixed = corpusAdapter("notes", "notes", DOCS);
    const reloadable = corpusAdapter("notes", "notes", DOCS, {
      reload: () => Promise.resolve(DOCS),
    });
    await bothWays(fixed, async (client, how) => {
      const d = await client.describe(call());
      assert.deepEqual(d, {
        kind: "answer",
        answer: {
          provider: "notes",
          scope: "notes",
          actions: ["search", "describe", "health", "expand", "stats"],
          filters: [],
          protocol_versions: [1],
        },
      }, how);
    });
    await bothWays(reloadable, async (client, how) => {
      const d = await client.describe(call());
      assert.equal(d.kind, "answer", how);
      if (d.kind === "answer") assert.ok(d.answer.actions.includes("refresh"), how);
    });
  });

  it("health is ok and complete, with the newest document's date as watermark and the count", async () => {
    await bothWays(corpusAdapter("notes", "notes", DOCS), async (client, how) => {
      assert.deepEqual(await client.health(call()), {
        kind: "answer",
        answer: {
          provider: "notes",
          scope: "notes",
          status: "ok",
          coverage: "complete",
          watermark: "2025-06-15T00:00:00.000Z",
          document_count: 2,
          diagnostics: [],
        },
      }, how);
    });
  });

  it("expand returns the document's text with its revision, the one search listed", async () => {
    await bothWays(corpusAdapter("notes", "notes", DOCS), async (client, how) => {
      const found = await client.call({
        query: "deadline",
        limit: 1,
        requestId: "r",
        traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        signal: AbortSignal.timeout(5_000),
        budget: new ByteBudget(16_000_000),
        connectGate: null,
      });
      assert.equal(found.kind, "answer", how);
      const candidate = found.kind === "answer" ? found.candidates[0] : undefined;
      assert.ok(candidate, how);
      const revision = (candidate.metadata as { revision: string }).revision;
      const out = await client.expand({ locator: candidate.locator, revision }, call());
      assert.equal(out.kind, "answer", `${how}: ${JSON.stringify(out)}`);
      if (out.kind !== "answer") return;
      assert.equal(out.answer.locator, "https://notes.example/deadlines");
      assert.equal(out.answer.title, "Deadlines");
      assert.equal(out.answer.text, DOCS[0]?.text, "the text whole, its lines kept");
      assert.equal(out.answer.revision, revision);
      assert.equal(out.answer.content_type, "text/plain");
      assert.equal(out.answer.truncated, false);
      assert.ok(!Number.isNaN(Date.parse(out.answer.retrieved_at)));
    });
  });

  it("locator_unknown for a locator never held and locator_expired for a changed or removed document are told apart", async () => {
    let current: CorpusDocument[] = DOCS;
    const adapter = corpusAdapter("notes", "notes", DOCS, {
      reload: () => Promise.resolve(current),
    });
    await bothWays(adapter, async (client, how) => {
      const unknown = await client.expand({ locator: "https://notes.example/never" }, call());
      assert.equal(unknown.kind, "failure", how);
      if (unknown.kind === "failure") {
        assert.equal(unknown.code, "locator_unknown", how);
        assert.equal(unknown.retryable, false, how);
      }
      const stale = await client.expand(
        { locator: "https://notes.example/deadlines", revision: "0000000000000000" },
        call(),
      );
      assert.equal(stale.kind === "failure" && stale.code, "locator_expired", how);
    });
    // The corpus reloads without "retries": the locator it issued is now expired, not unknown.
    current = [DOCS[0] as CorpusDocument, {
      ...DOCS[0] as CorpusDocument,
      locator: "https://notes.example/new",
      title: "New",
    }];
    await bothWays(adapter, async (client, how) => {
      const refreshed = await client.refresh(call());
      assert.equal(refreshed.kind === "answer" && refreshed.answer.document_count, 2, how);
      const gone = await client.expand({ locator: "https://notes.example/retries" }, call());
      assert.equal(gone.kind === "failure" && gone.code, "locator_expired", how);
      const added = await client.expand({ locator: "https://notes.example/new" }, call());
      assert.equal(added.kind === "answer" && added.answer.title, "New", how);
    });
  });

  it("refresh reloads the documents and answers the new health", async () => {
    let current: CorpusDocument[] = [DOCS[0] as CorpusDocument];
    const adapter = corpusAdapter("notes", "notes", current, {
      reload: () => Promise.resolve(current),
    });
    current = DOCS;
    await bothWays(adapter, async (client, how) => {
      const out = await client.refresh(call());
      assert.equal(out.kind, "answer", how);
      if (out.kind === "answer") {
        assert.equal(out.answer.document_count, 2, how);
        assert.equal(out.answer.watermark, "2025-06-15T00:00:00.000Z", how);
      }
    });
  });

  it("a provider without health, expand or refresh reads unsupported, never an answer or unavailable", async () => {
    const searchOnly: SearchAdapter = {
      name: "p",
      scope: "s",
      search: () => Promise.resolve({ candidates: [] }),
    };
    await bothWays(searchOnly, async (client, how) => {
      assert.equal((await client.health(call())).kind, "unsupported", how);
      assert.equal((await client.refresh(call())).kind, "unsupported", how);
      assert.equal((await client.expand({ locator: "x" }, call())).kind, "unsupported", how);
      const d = await client.describe(call());
      assert.deepEqual(d.kind === "answer" && d.answer.actions, ["search", "describe"], how);
    });
  });

  it("expand text past MAX_EXPAND_TEXT_CHARS is cut with the marker and says so", async () => {
    const long = "é".repeat(MAX_EXPAND_TEXT_CHARS + 5_000);
    const adapter: SearchAdapter = {
      name: "p",
      scope: "s",
      search: () => Promise.resolve({ candidates: [] }),
      expand: () =>
        Promise.resolve({
          title: "Long",
          text: long,
          content_type: "text/plain",
          retrieved_at: "2026-01-31T12:00:00Z",
        }),
    };
    await bothWays(adapter, async (client, how) => {
      const out = await client.expand({ locator: "x" }, call());
      assert.equal(out.kind, "answer", how);
      if (out.kind !== "answer") return;
      assert.equal(Array.from(out.answer.text).length, MAX_EXPAND_TEXT_CHARS, how);
      assert.ok(out.answer.text.endsWith(TRUNCATION_MARKER), how);
      assert.equal(out.answer.truncated, true, how);
    });
  });

  it("health diagnostics are redacted and bounded", async () => {
    const adapter: SearchAdapter = {
      name: "p",
      scope: "s",
      search: () => Promise.resolve({ candidates: [] }),
      health: () =>
        Promise.resolve({
          status: "degraded",
          coverage: "partial",
          watermark: null,
          diagnostics: [
            "index rebuild failed: Authorization: Bearer sk-live-0123456789abcdefghij",
            ...Array.from({ length: 30 }, (_, i) => `line ${i}`),
          ],
        }),
    };
    await bothWays(adapter, async (client, how) => {
      const out = await client.health(call());
      assert.equal(out.kind, "answer", how);
      if (out.kind !== "answer") return;
      assert.equal(out.answer.status, "degraded");
      assert.ok(out.answer.diagnostics.length <= 10, how);
      assert.ok(!out.answer.diagnostics.join(" ").includes("sk-live-0123456789"), how);
    });
  });

  it("a health that throws is a failure, never healthy", async () => {
    const adapter: SearchAdapter = {
      name: "p",
      scope: "s",
      search: () => Promise.resolve({ candidates: [] }),
      health: () => Promise.reject(new ProviderError("adapter_unavailable", "the index is gone")),
    };
    await bothWays(adapter, async (client, how) => {
      const out = await client.health(call());
      assert.equal(out.kind, "failure", how);
      if (out.kind === "failure") assert.equal(out.code, "adapter_unavailable", how);
    });
  });
});

describe("providers that predate describe keep working as search-only", () => {
  const cases: Array<[string, Handler, "unsupported" | "invalid"]> = [
    [
      "400 invalid_request",
      raw(400, '{"schema_version":"tracefetch.provider-error.v1","code":"invalid_request"}'),
      "unsupported",
    ],
    ["404 with no body", raw(404, ""), "unsupported"],
    [
      "501 unsupported_action",
      raw(501, '{"schema_version":"tracefetch.provider-error.v1","code":"unsupported_action"}'),
      "unsupported",
    ],
    [
      "200 with a search answer",
      raw(
        200,
        '{"schema_version":"tracefetch.provider-response.v1","provider":"p","scope":"s","candidates":[]}',
      ),
      "invalid",
    ],
    ["200 with garbage", raw(200, "{not json"), "invalid"],
    [
      "200 labelled text/html",
      raw(200, "<html></html>", { "content-type": "text/html" }),
      "invalid",
    ],
    ["a redirect", raw(302, "", { location: "http://127.0.0.1:1/" }), "invalid"],
    [
      "a valid describe naming another provider",
      raw(
        200,
        JSON.stringify({
          schema_version: "tracefetch.provider-describe.v1",
          provider: "q",
          scope: "s",
          actions: ["search"],
          filters: [],
          protocol_versions: [1],
        }),
      ),
      "invalid",
    ],
  ];
  for (const [what, handler, kind] of cases) {
    it(`describe answered ${what} reads ${kind}`, async () => {
      await withServer(handler, async (server) => {
        assert.equal((await overHttp(server).describe(call())).kind, kind);
      });
    });
  }

  it("a describe that fails on the way (503, refused connection) is a failure to retry, not invalid", async () => {
    await withServer(raw(503, ""), async (server) => {
      const out = await overHttp(server).describe(call());
      assert.equal(out.kind === "failure" && out.retryable, true);
    });
    const closed = await startServer(hold);
    await closed.close();
    const out = await overHttp(closed).describe(call());
    assert.equal(out.kind === "failure" && out.outcome, "adapter_unavailable");
  });

  it("a provider that speaks major 2 only describes itself validly, and says so", async () => {
    const body = {
      schema_version: "tracefetch.provider-describe.v1",
      provider: "p",
      scope: "s",
      actions: ["search", "describe"],
      filters: ["domains"],
      protocol_versions: [2],
    };
    await withServer(raw(200, JSON.stringify(body)), async (server) => {
      const out = await overHttp(server).describe(call());
      assert.deepEqual(out.kind === "answer" && out.answer.protocol_versions, [2]);
    });
  });

  it("health answered 404 or 501 is unsupported; a refused or silent health probe is a failure", async () => {
    for (const status of [404, 501]) {
      await withServer(raw(status, ""), async (server) => {
        assert.equal((await overHttp(server).health(call())).kind, "unsupported", `HTTP ${status}`);
      });
    }
    await withServer(raw(500, ""), async (server) => {
      assert.equal((await overHttp(server).health(call())).kind, "failure");
    });
    await withServer(hold, async (server) => {
      const out = await overHttp(server).health({ signal: AbortSignal.timeout(200) });
      assert.equal(out.kind, "failure");
    });
  });

  it("an expand 404 with locator_unknown and a 410 with locator_expired are failures with those codes, not unsupported", async () => {
    const error = (code: string) =>
      JSON.stringify({ schema_version: "tracefetch.provider-error.v1", code, message: code });
    await withServer(raw(404, error("locator_unknown")), async (server) => {
      const out = await overHttp(server).expand({ locator: "x" }, call());
      assert.equal(out.kind === "failure" && out.code, "locator_unknown");
    });
    await withServer(raw(410, error("locator_expired")), async (server) => {
      const out = await overHttp(server).expand({ locator: "x" }, call());
      assert.equal(out.kind === "failure" && out.code, "locator_expired");
    });
  });

  it("an empty 200 to expand is a protocol error, never evidence", async () => {
    await withServer(raw(200, "{}"), async (server) => {
      const out = await overHttp(server).expand({ locator: "x" }, call());
      assert.equal(out.kind === "failure" && out.outcome, "provider_protocol_error");
    });
  });

  it("the command bridge describes its command providers as search-only", async () => {
    const manifest = await readCommandManifest(
      fileURLToPath(new URL("./fixtures/commands/tracefetch-1.0.json", import.meta.url)),
    );
    const bridge = commandBridge(manifest.providers);
    try {
      const post = (body: unknown) =>
        bridge.fetch(
          new Request("http://bridge.test/good", {
            method: "POST",
            body: JSON.stringify(body),
            headers: { "content-type": "application/json" },
          }),
        );
      const described = await post({
        schema_version: "tracefetch.provider-describe-request.v1",
        action: "describe",
      });
      assert.equal(described.status, 200);
      assert.deepEqual((await described.json()).actions, ["search", "describe"]);
      const health = await post({
        schema_version: "tracefetch.provider-health-request.v1",
        action: "health",
      });
      assert.equal(health.status, 501);
    } finally {
      await bridge.stop();
    }
  });
});

type Recording = {
  request: { method: string; path: string };
  response: { status: number; headers: Record<string, string>; body: unknown };
};
const recording = (name: string): Recording =>
  JSON.parse(readFileSync(new URL(`./fixtures/recordings/${name}.json`, import.meta.url), "utf8"));

/** Serves each recording at its method and path; anything else is a 500 naming it. */
function replay(...names: string[]): Handler {
  const routes = new Map(names.map((name) => {
    const r = recording(name);
    return [`${r.request.method} ${r.request.path}`, r.response] as const;
  }));
  return (req, res) => {
    const found = routes.get(`${req.method} ${new URL(req.url ?? "/", "http://x").pathname}`);
    res.writeHead(found?.status ?? 500, found?.headers ?? { "content-type": "application/json" });
    res.end(
      JSON.stringify(found?.body ?? { message: `no recording for ${req.method} ${req.url}` }),
    );
  };
}

const KEY = "exa-test-key-5e1f0c9d2b7a4e38";
const TOKEN = `ghp_${"T0k3n".repeat(8)}`;

describe("exa expand through its contents API (recorded)", () => {
  it("asks /contents for the page's text and returns it as evidence", async () => {
    await withServer(replay("exa-contents"), async (server) => {
      const adapter = exaAdapter({
        apiKey: KEY,
        baseUrl: `http://127.0.0.1:${server.port}`,
        now: () => Date.UTC(2026, 0, 31),
      });
      const out = await inProcessProvider(adapter).expand({
        locator: "https://arxiv.org/abs/2307.06435",
      }, call());
      assert.equal(out.kind, "answer", JSON.stringify(out));
      if (out.kind !== "answer") return;
      assert.equal(out.answer.title, "A Comprehensive Overview of Large Language Models");
      assert.ok(out.answer.text.startsWith("Large Language Models (LLMs)"));
      assert.equal(out.answer.retrieved_at, "2026-01-31T00:00:00.000Z");
      const [req] = server.requests;
      assert.equal(req?.headers["x-api-key"], KEY);
      const sent = JSON.parse(req?.body ?? "{}");
      assert.deepEqual(sent.urls, ["https://arxiv.org/abs/2307.06435"]);
      assert.equal(sent.text.maxCharacters, MAX_EXPAND_TEXT_CHARS + 1);
    });
  });

  it("a page Exa can no longer find is locator_expired; a locator that is no URL is locator_unknown and sends nothing", async () => {
    await withServer(replay("exa-contents-not-found"), async (server) => {
      const client = inProcessProvider(
        exaAdapter({ apiKey: KEY, baseUrl: `http://127.0.0.1:${server.port}` }),
      );
      const gone = await client.expand({ locator: "https://gone.example.org/page" }, call());
      assert.equal(gone.kind === "failure" && gone.code, "locator_expired");
      const before = server.requests.length;
      for (
        const locator of ["docs/protocol.md", "file:///etc/passwd", "https://user:pw@x.example/"]
      ) {
        const out = await client.expand({ locator }, call());
        assert.equal(out.kind === "failure" && out.code, "locator_unknown", locator);
      }
      assert.equal(
        server.requests.length,
        before,
        "nothing was sent for a locator exa never issued",
      );
    });
  });
});

describe("github expand of issues and repositories (recorded)", () => {
  const recorded = replay("github-issue", "github-repository", "github-404", "github-410-deleted");

  it("reads an issue and a repository from URLs built from the locator's validated parts", async () => {
    await withServer(recorded, async (server) => {
      const client = inProcessProvider(
        githubAdapter({ token: TOKEN, baseUrl: `http://127.0.0.1:${server.port}` }),
      );
      const issue = await client.expand({
        locator: "https://github.com/octocat/Hello-World/issues/1347",
      }, call());
      assert.equal(issue.kind, "answer", JSON.stringify(issue));
      if (issue.kind === "answer") {
        assert.equal(issue.answer.title, "Found a bug");
        assert.ok(issue.answer.text.includes("Steps to reproduce"));
        assert.equal(issue.answer.revision, "2011-04-22T13:33:48Z");
        assert.equal(issue.answer.content_type, "text/markdown");
      }
      const repo = await client.expand(
        { locator: "https://github.com/octocat/Hello-World" },
        call(),
      );
      assert.equal(repo.kind === "answer" && repo.answer.title, "octocat/Hello-World");
      assert.deepEqual(server.requests.map((r) => r.url), [
        "/repos/octocat/Hello-World/issues/1347",
        "/repos/octocat/Hello-World",
      ]);
      assert.equal(server.requests[0]?.headers.authorization, `Bearer ${TOKEN}`);
    });
  });

  it("404 is locator_unknown, 410 (deleted) and a changed revision are locator_expired", async () => {
    await withServer(recorded, async (server) => {
      const client = inProcessProvider(
        githubAdapter({ token: TOKEN, baseUrl: `http://127.0.0.1:${server.port}` }),
      );
      const missing = await client.expand({
        locator: "https://github.com/octocat/Hello-World/issues/999999",
      }, call());
      assert.equal(missing.kind === "failure" && missing.code, "locator_unknown");
      const deleted = await client.expand({
        locator: "https://github.com/octocat/Hello-World/issues/1348",
      }, call());
      assert.equal(deleted.kind === "failure" && deleted.code, "locator_expired");
      const changed = await client.expand(
        {
          locator: "https://github.com/octocat/Hello-World/issues/1347",
          revision: "2010-01-01T00:00:00Z",
        },
        call(),
      );
      assert.equal(changed.kind === "failure" && changed.code, "locator_expired");
      if (missing.kind === "failure") assert.ok(!missing.message.includes(TOKEN));
    });
  });

  it("refuses every locator not of its own shape without sending anything", () => {
    for (
      const locator of [
        "https://github.com/octocat",
        "https://github.com/octocat/Hello-World/issues/0",
        "https://github.com/octocat/Hello-World/issues/1/../../../../users",
        "https://github.com/octocat/..",
        "https://github.com/octocat/Hello-World?x=1",
        "https://evil.example/octocat/Hello-World",
        "http://github.com/octocat/Hello-World",
        "https://github.com:8443/octocat/Hello-World",
        "https://github.com/octocat/Hello-World/commits/abc",
        "https://github.com/%2e%2e/Hello-World",
        "not a url",
      ]
    ) {
      assert.throws(
        () => githubLocator(locator),
        (e: unknown) => e instanceof ProviderError && e.code === "locator_unknown",
        locator,
      );
    }
    assert.deepEqual(githubLocator("https://github.com/octocat/Hello-World/pull/12"), {
      owner: "octocat",
      repo: "Hello-World",
      number: "12",
    });
  });
});

describe("health of the SearXNG and OpenAlex providers", () => {
  it("SearXNG is ok when its /config answers, and unavailable with coverage unknown when it does not", async () => {
    await withServer(raw(200, '{"engines":[]}'), async (server) => {
      const adapter = searxngAdapter({
        ...searxngConfig({ base: `http://127.0.0.1:${server.port}/` }),
        now: () => Date.UTC(2026, 0, 31),
      });
      await bothWays(adapter, async (client, how) => {
        const out = await client.health(call());
        assert.equal(out.kind === "answer" && out.answer.status, "ok", how);
        assert.equal(
          out.kind === "answer" && out.answer.watermark,
          "2026-01-31T00:00:00.000Z",
          how,
        );
      });
      assert.ok(server.requests.every((r) => r.url === "/config"));
    });
    const down = await startServer(hold);
    await down.close();
    const adapter = searxngAdapter(searxngConfig({ base: `http://127.0.0.1:${down.port}/` }));
    await bothWays(adapter, async (client, how) => {
      const out = await client.health(call());
      assert.equal(out.kind, "answer", how);
      if (out.kind !== "answer") return;
      assert.equal(out.answer.status, "unavailable", how);
      assert.equal(out.answer.coverage, "unknown", how);
      assert.equal(out.answer.watermark, null, how);
      assert.ok(out.answer.diagnostics.length > 0, how);
    });
  });

  it("OpenAlex probes one work, reports its count, and is degraded while rate limited", async () => {
    await withServer(
      raw(200, '{"meta":{"count":250000000},"results":[{"id":"https://openalex.org/W1"}]}'),
      async (server) => {
        const adapter = openAlexAdapter(
          openAlexConfig({ base: `http://127.0.0.1:${server.port}/`, mailto: "ops@example.org" }),
        );
        const out = await inProcessProvider(adapter).health(call());
        assert.equal(out.kind === "answer" && out.answer.document_count, 250_000_000);
        const asked = new URL(server.requests[0]?.url ?? "", "http://x");
        assert.equal(asked.pathname, "/works");
        assert.equal(asked.searchParams.get("per-page"), "1");
      },
    );
    await withServer(raw(429, '{"error":"Too many requests"}'), async (server) => {
      const adapter = openAlexAdapter(openAlexConfig({ base: `http://127.0.0.1:${server.port}/` }));
      const out = await inProcessProvider(adapter).health(call());
      assert.equal(out.kind === "answer" && out.answer.status, "degraded");
    });
  });
});

describe("RFC 3339 date-times in action answers", () => {
  it("a day past its month's end is refused, though Date.parse would roll it over", () => {
    for (
      const impossible of ["2025-02-30T10:00:00Z", "2025-04-31T00:00:00Z", "2025-02-29T00:00:00Z"]
    ) {
      assert.equal(isRfc3339(impossible), false, impossible);
    }
    for (
      const real of ["2024-02-29T00:00:00Z", "2025-01-31T23:59:59.5+02:00", "2025-12-31 00:00:00Z"]
    ) {
      assert.equal(isRfc3339(real), true, real);
    }
  });
});
