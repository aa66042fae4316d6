/**
 * The SearXNG and OpenAlex example providers against recorded answers (fixtures/recordings/,
 * hand-made from the public API documentation) replayed on 127.0.0.1: the exact upstream request,
 * the mapping to candidates, and every error answer's outcome through a real gateway, served over
 * HTTP and run in process alike.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { serveProvider } from "../src/kit/serve-provider.ts";
import { listen } from "../src/runtime/node-listen.ts";
import type { SearchAdapter } from "../src/protocol/provider-contract.ts";
import { searxngAdapter, searxngConfig } from "../providers/searxng/searxng-adapter.ts";
import {
  openAlexAdapter,
  openAlexConfig,
  rebuildAbstract,
} from "../providers/papers/openalex-adapter.ts";
import { gateway, search } from "./support/gateway.ts";
import { type Recording, recording } from "./support/recordings.ts";
import { startServer, type TestServer } from "./support/servers.ts";

/** Replays one recording to every request. */
function replay(rec: Recording): Promise<TestServer> {
  return startServer((_req, res) => {
    res.writeHead(rec.response.status, rec.response.headers);
    res.end(rec.response.body_text ?? JSON.stringify(rec.response.body));
  });
}

/**
 * Serves `make(upstreamBase)` over HTTP, searches it through a gateway, and returns the attempt
 * and the requests the upstream received.
 */
async function attemptOf(
  file: string,
  make: (base: string) => SearchAdapter,
  params: Record<string, string> = {},
) {
  const upstream = await replay(recording(file));
  const adapter = make(`http://127.0.0.1:${upstream.port}/`);
  const provider = await listen(serveProvider(adapter).fetch);
  try {
    const app = gateway([{
      name: adapter.name,
      scope: adapter.scope,
      endpoint: `http://127.0.0.1:${provider.port}/search`,
      timeout_seconds: 5,
    }]);
    const { body, text } = await search(app, { q: "structured concurrency", ...params });
    return {
      attempt: body.result.candidates[0],
      action: body.action,
      text,
      requests: upstream.requests,
    };
  } finally {
    await provider.close();
    await upstream.close();
  }
}

/** The part of an attempt that says what failed and what to do about it. */
// deno-lint-ignore no-explicit-any
const record = (a: any) => ({
  outcome: a.outcome,
  code: a.code,
  retryable: a.retryable,
  retry_after_ms: a.retry_after_ms,
});

/**
 * Fails `make(upstreamBase)` against one recording twice, with a fresh upstream each time: served
 * over HTTP by serveProvider, and in process as a built-in. Returns each run's attempt, its record
 * and the envelope's action.
 */
async function failureOf(file: string, make: (base: string) => SearchAdapter) {
  const overHttp = await attemptOf(file, make);
  const upstream = await replay(recording(file));
  try {
    const adapter = make(`http://127.0.0.1:${upstream.port}/`);
    const app = gateway([{ name: "exa", scope: adapter.scope, timeout_seconds: 5 }], {
      ports: { builtins: { exa: adapter } },
    });
    const { body } = await search(app, { q: "structured concurrency" });
    return {
      http: { attempt: overHttp.attempt, action: overHttp.action },
      inProcess: { attempt: body.result.candidates[0], action: body.action },
    };
  } finally {
    await upstream.close();
  }
}

/** The upstream request as path and every query parameter (repeats would show as arrays). */
function requested(url: string) {
  const u = new URL(url, "http://upstream.invalid");
  const query: Record<string, string | string[]> = {};
  for (const key of new Set(u.searchParams.keys())) {
    const all = u.searchParams.getAll(key);
    query[key] = all.length === 1 ? all[0] as string : all;
  }
  return { path: u.pathname, query };
}

const searxng = (base: string) =>
  searxngAdapter(searxngConfig({ base, categories: "general,science", language: "en" }));
const papers = (base: string) =>
  openAlexAdapter(openAlexConfig({ base, mailto: "research-tools@example.org" }));

describe("searxng provider", () => {
  it("asks SearXNG's JSON API exactly, maps its results and turns failed engines into warnings", async () => {
    const rec = recording("searxng-search");
    const { attempt, requests } = await attemptOf("searxng-search", searxng);
    assert.equal(requests.length, 1);
    assert.equal(requests[0]?.method, rec.request.method);
    assert.deepEqual(requested(requests[0]!.url), { path: "/search", query: rec.request.query });
    assert.equal(attempt.outcome, "success");
    assert.equal(attempt.code, "ok");
    assert.equal(attempt.candidate_count, 4);
    const [first, , paper, untitled] = attempt.candidates;
    assert.equal(
      first.locator,
      "https://vorpus.org/blog/notes-on-structured-concurrency-or-go-statement-considered-harmful/",
    );
    assert.equal(
      first.title,
      "Notes on structured concurrency, or: Go statement considered harmful",
    );
    assert.match(first.snippet, /^Every concurrency API needs a way to run code concurrently/);
    assert.equal(first.published_at, null);
    assert.deepEqual({ ...first.metadata }, {
      engines: ["duckduckgo", "startpage", "mojeek"],
      score: 7.5,
      category: "general",
    });
    assert.equal(paper.published_at, "2023-05-16T17:58:02");
    assert.equal(paper.metadata.category, "science");
    // An empty title falls back to the URL; no snippet reaches the caller as "".
    assert.equal(untitled.title, untitled.locator);
    assert.equal(untitled.snippet, "");
    assert.deepEqual(
      attempt.warnings.filter((w: string) => w.startsWith("SearXNG engine")),
      [
        'SearXNG engine "brave" did not answer: too many requests',
        'SearXNG engine "google" did not answer: Suspended: CAPTCHA',
      ],
    );
  });

  it("clips to the request's limit", async () => {
    const { attempt } = await attemptOf("searxng-search", searxng, { limit: "2" });
    assert.equal(attempt.outcome, "success");
    assert.equal(attempt.candidate_count, 2);
  });

  const failures: Array<[string, string, string, boolean, RegExp]> = [
    // file, outcome, code, retryable, message
    [
      "searxng-engines-failed",
      "search_failed",
      "search_failed",
      true,
      /found nothing while engines failed: duckduckgo \(timeout\), brave/,
    ],
    ["searxng-429", "search_failed", "rate_limited", true, /SearXNG is rate limiting \(HTTP 429\)/],
    ["searxng-502", "search_failed", "search_failed", true, /SearXNG answered HTTP 502/],
    // An operator must enable the JSON format: the adapter says no retry helps, and so does the
    // gateway, in process and over HTTP alike.
    [
      "searxng-403-format-disabled",
      "adapter_unavailable",
      "adapter_unavailable",
      false,
      /search\.formats/,
    ],
    // The same request would get the same page back.
    ["searxng-html-not-json", "search_failed", "search_failed", false, /not SearXNG JSON/],
  ];
  for (const [file, outcome, code, retryable, message] of failures) {
    const action = retryable ? "retry" : "report";
    it(`${file}: ${outcome} / ${code}, retryable ${retryable}, action ${action}, in process and over HTTP alike`, async () => {
      const { http, inProcess } = await failureOf(file, searxng);
      const wait = file === "searxng-429" ? 7_000 : undefined;
      for (const [how, run] of [["over HTTP", http], ["in process", inProcess]] as const) {
        assert.deepEqual(
          record(run.attempt),
          { outcome, code, retryable, retry_after_ms: wait },
          `${how}: ${JSON.stringify(run.attempt)}`,
        );
        assert.equal(run.action, action, how);
        assert.match(run.attempt.message, message, how);
        assert.equal(run.attempt.candidate_count, 0, how);
      }
    });
  }
});

describe("papers provider (OpenAlex)", () => {
  it("asks OpenAlex's works search exactly and maps works to paper candidates", async () => {
    const rec = recording("openalex-works");
    const { attempt, requests } = await attemptOf("openalex-works", papers);
    assert.equal(requests.length, 1);
    assert.equal(requests[0]?.method, "GET");
    assert.deepEqual(requested(requests[0]!.url), { path: "/works", query: rec.request.query });
    assert.equal(attempt.outcome, "success");
    assert.equal(attempt.candidate_count, 3);
    const [doi, noDoi, third] = attempt.candidates;
    assert.equal(doi.locator, "https://doi.org/10.5555/tfe.2023.0001");
    assert.equal(doi.title, "Structured Concurrency for Reliable Distributed Services");
    assert.equal(doi.published_at, "2023-06-12");
    assert.match(
      doi.snippet,
      /^Structured concurrency ties the lifetime of every task to the scope that started it\. We show that the discipline/,
    );
    assert.deepEqual({ ...doi.metadata }, {
      openalex_id: "https://openalex.org/W4385571234",
      citation_count: 42,
      year: 2023,
      venue: "Proceedings of the ACM on Programming Languages",
      authors: ["Ada Lindqvist", "Tomás Okafor", "Mei Tanaka", "Priya Raman", "Jonas Weber"],
      author_count: 6,
    });
    // No DOI: the OpenAlex id is the locator; no abstract: no snippet.
    assert.equal(noDoi.locator, "https://openalex.org/W2999999001");
    assert.equal(noDoi.snippet, "");
    assert.equal(noDoi.metadata.venue, undefined);
    assert.equal(third.metadata.citation_count, 0);
    assert.equal(
      third.snippet,
      "Deadlines propagate through a call tree when every call carries the remaining budget of its caller. We measure the cost of the deadline checks and find it small.",
    );
  });

  it("asks for the request's limit per page", async () => {
    const { requests } = await attemptOf("openalex-works", papers, { limit: "3" });
    assert.equal(requested(requests[0]!.url).query["per-page"], "3");
  });

  const failures: Array<[string, string, string, boolean, RegExp]> = [
    [
      "openalex-429",
      "search_failed",
      "rate_limited",
      true,
      /OpenAlex is rate limiting \(HTTP 429\): You have exceeded your daily usage allowance/,
    ],
    // A bare 4xx is search_failed, not retryable: the same request is refused the same way.
    ["openalex-400", "search_failed", "search_failed", false, /OpenAlex answered HTTP 400/],
    [
      "openalex-500",
      "search_failed",
      "search_failed",
      true,
      /OpenAlex answered HTTP 500: Something went wrong/,
    ],
    ["openalex-truncated", "search_failed", "search_failed", false, /not OpenAlex JSON/],
  ];
  for (const [file, outcome, code, retryable, message] of failures) {
    const action = retryable ? "retry" : "report";
    it(`${file}: ${outcome} / ${code}, retryable ${retryable}, action ${action}, in process and over HTTP alike`, async () => {
      const { http, inProcess } = await failureOf(file, papers);
      for (const [how, run] of [["over HTTP", http], ["in process", inProcess]] as const) {
        assert.equal(run.attempt.outcome, outcome, how);
        assert.equal(run.attempt.code, code, how);
        assert.equal(run.attempt.retryable, retryable, how);
        assert.equal(run.action, action, how);
        assert.match(run.attempt.message, message, how);
        assert.equal(run.attempt.candidate_count, 0, how);
      }
      assert.deepEqual(record(http.attempt), record(inProcess.attempt));
    });
  }

  it("rebuilds an abstract in position order and ignores positions it cannot trust", () => {
    assert.equal(rebuildAbstract({ b: [1, 3], a: [0], c: [2] }), "a b c b");
    assert.equal(rebuildAbstract({ a: [0], huge: [1e9], neg: [-1], frac: [0.5], b: [2] }), "a b");
    assert.equal(rebuildAbstract(null), null);
    assert.equal(rebuildAbstract({}), null);
  });
});

describe("example provider configuration", () => {
  it("a base URL is https, or http on loopback, without credentials or a query", () => {
    assert.equal(
      searxngConfig({ base: "https://searx.example.org/sx" }).baseUrl.href,
      "https://searx.example.org/sx/",
    );
    assert.equal(openAlexConfig({}).baseUrl.href, "https://api.openalex.org/");
    for (
      const base of [
        "http://searx.example.org",
        "https://u:p@searx.example.org",
        "https://searx.example.org/?x=1",
        "ftp://searx.example.org",
        undefined,
      ]
    ) {
      assert.throws(() => searxngConfig({ base }), { name: "ConfigError" }, String(base));
    }
    assert.throws(() => openAlexConfig({ name: "Papers" }), { name: "ConfigError" });
  });
});
