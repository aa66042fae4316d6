/**
 * Provider conformance (src/kit) and serveProvider. The corpus example providers pass every case
 * and their transcripts match tests/fixtures/conformance/<name>.txt (the other example providers
 * are in conformance-examples.test.ts); broken providers fail exactly the cases for their faults.
 * Regenerate the transcripts after an intended change with
 * `UPDATE_FIXTURES=1 node --import tsx --test tests/conformance.test.ts`.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { EXAMPLE_PROVIDERS } from "../providers/corpus/embedded-default.ts";
import { loadCorpus } from "../providers/corpus/load-corpus.ts";
import { serveProvider } from "../src/kit/serve-provider.ts";
import {
  CONFORMANCE_CASES,
  type ConformanceCaseName,
  formatTranscript,
  NONSENSE_QUERY_PREFIX,
  runConformance,
} from "../src/kit/mod.ts";
import { checkBounds } from "../src/kit/check-bounds.ts";
import { sanitiseMetadata } from "../src/core/sanitize.ts";
import { listen } from "../src/runtime/node-listen.ts";
import { corpusAdapter } from "../providers/corpus/corpus-adapter.ts";
import { ProviderError, type SearchAdapter } from "../src/protocol/provider-contract.ts";
import { assertConformsAndReplays, failedCases } from "./support/conformance.ts";
import { type Handler, hold, startServer } from "./support/servers.ts";

describe("conformance: the example providers", () => {
  for (const p of EXAMPLE_PROVIDERS) {
    it(`${p.name} passes every case and replays tests/fixtures/conformance/${p.name}.txt`, async () => {
      const dir = fileURLToPath(new URL(`../providers/corpus/data/${p.folder}`, import.meta.url));
      const app = serveProvider(corpusAdapter(p.name, p.scope, await loadCorpus(dir)));
      const server = await listen(app.fetch, "127.0.0.1", 0);
      try {
        const report = await runConformance(`http://127.0.0.1:${server.port}/search`, {
          name: p.name,
          scope: p.scope,
          timeoutMs: 5_000,
        });
        await assertConformsAndReplays(report, p.name);
      } finally {
        await server.close();
      }
    });
  }
});

type Fault =
  | "ignores-limit"
  | "accepts-malformed"
  | "wrong-identity"
  | "long-title"
  | "secret-metadata"
  | "accepts-any-action"
  | "never-empty";

/** A provider that behaves well except for `faults`. */
function broken(...faults: Fault[]): Handler {
  const has = (f: Fault) => faults.includes(f);
  return (_req, res, text) => {
    const send = (status: number, value: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(value));
    };
    const refuse = (status: number, code: string) =>
      send(status, { schema_version: "tracefetch.provider-error.v1", code, message: code });
    const ok = (candidates: unknown[]) =>
      send(200, {
        schema_version: "tracefetch.provider-response.v1",
        provider: has("wrong-identity") ? "someone-else" : "broken",
        scope: "broken",
        candidates,
        warnings: [],
      });
    let req: { action?: unknown; query?: unknown; limit?: unknown } | null = null;
    try {
      req = JSON.parse(text);
    } catch { /* refused below as malformed */ }
    if (req?.action !== undefined && req.action !== "search") {
      return has("accepts-any-action") ? ok([]) : refuse(501, "unsupported_action");
    }
    if (typeof req?.query !== "string" || typeof req.limit !== "number") {
      return has("accepts-malformed") ? ok([]) : refuse(400, "invalid_request");
    }
    if (req.query.startsWith(NONSENSE_QUERY_PREFIX) && !has("never-empty")) return ok([]);
    const all = [1, 2, 3, 4, 5].map((i) => ({
      title: i === 5 && has("long-title") ? "t".repeat(301) : `Page ${i}`,
      locator: `https://broken.example/${i}`,
      ...(i === 5 && has("secret-metadata") ? { metadata: { api_key: "k" } } : {}),
    }));
    return ok(has("ignores-limit") ? all : all.slice(0, req.limit));
  };
}

describe("conformance: a broken provider fails exactly the cases for its faults", () => {
  const table: Array<[Fault[], ConformanceCaseName[]]> = [
    [[], []],
    [["ignores-limit"], ["limit-1", "limit-3"]],
    [["accepts-malformed"], ["malformed-missing-query", "malformed-not-json"]],
    [["wrong-identity"], ["identity"]],
    [["long-title"], ["bounds"]],
    [["secret-metadata"], ["bounds"]],
    [["accepts-any-action"], [
      "describe",
      "expand",
      "expand-unknown-locator",
      "health",
      "refresh",
      "unsupported-action",
    ]],
    [["never-empty"], ["honest-empty"]],
    [
      [
        "ignores-limit",
        "accepts-malformed",
        "wrong-identity",
        "long-title",
        "accepts-any-action",
        "never-empty",
      ],
      CONFORMANCE_CASES.map((c) => c.case).filter((c) => c !== "search-valid"),
    ],
  ];
  for (const [faults, expected] of table) {
    it(`${faults.join(", ") || "no fault"}: fails ${expected.join(", ") || "nothing"}`, async () => {
      const server = await startServer(broken(...faults));
      try {
        const report = await runConformance(server.url, { name: "broken", scope: "broken" });
        assert.deepEqual(failedCases(report), [...expected].sort(), formatTranscript(report));
        assert.equal(report.ok, expected.length === 0);
      } finally {
        await server.close();
      }
    });
  }

  it("a provider that never answers fails every case within the timeout", async () => {
    const server = await startServer(hold);
    try {
      const started = Date.now();
      const report = await runConformance(server.url, {
        name: "broken",
        scope: "broken",
        timeoutMs: 100,
      });
      assert.equal(failedCases(report).length, CONFORMANCE_CASES.length);
      assert.ok(report.cases.every((c) => c.response === null));
      assert.match(report.cases[0]?.reasons[0] ?? "", /within 100 ms/);
      assert.ok(Date.now() - started < 5_000);
    } finally {
      await server.close();
    }
  });
});

/**
 * A strict search-only v1 provider: it searches as `broken()` with no fault, and refuses every
 * other action, describe included, with `status` and an error body of `code`. With `declared`, it
 * answers describe listing those actions, and still refuses them.
 */
function strictV1(status: number, code: string, declared: string[] = []): Handler {
  const search = broken();
  return (req, res, text) => {
    let action: unknown;
    try {
      action = (JSON.parse(text) as { action?: unknown } | null)?.action;
    } catch { /* not JSON: the search handler refuses it as malformed */ }
    if (action === undefined || action === "search") return search(req, res, text);
    const describes = action === "describe" && declared.length > 0;
    res.writeHead(describes ? 200 : status, { "content-type": "application/json" });
    res.end(JSON.stringify(
      describes
        ? {
          schema_version: "tracefetch.provider-describe.v1",
          provider: "broken",
          scope: "broken",
          actions: ["search", "describe", ...declared],
          filters: [],
          protocol_versions: [1],
        }
        : { schema_version: "tracefetch.provider-error.v1", code, message: code },
    ));
  };
}

describe('conformance: 400, 404, 405 and 501 mean "not supported" for an action describe does not declare', () => {
  const verdicts = (report: { cases: Array<{ case: string; verdict: string }> }) =>
    Object.fromEntries(report.cases.map((c) => [c.case, c.verdict]));
  const NOT_DECLARED: ConformanceCaseName[] = [
    "describe",
    "health",
    "expand",
    "expand-unknown-locator",
    "refresh",
  ];

  for (const [status, code] of [[400, "invalid_request"], [405, "unsupported_action"]] as const) {
    it(`a search-only v1 provider refusing every other action with ${status} ${code} passes describe, health, expand, expand-unknown-locator and refresh; an action no version defines still wants 404 or 501`, async () => {
      const server = await startServer(strictV1(status, code));
      try {
        const report = await runConformance(server.url, { name: "broken", scope: "broken" });
        const transcript = formatTranscript(report);
        for (const c of NOT_DECLARED) assert.equal(verdicts(report)[c], "pass", transcript);
        assert.deepEqual(failedCases(report), ["unsupported-action"], transcript);
        // A refusal with another code passes with advice to say unsupported_action exactly.
        const health = report.cases.find((c) => c.case === "health")?.reasons ?? [];
        if (code === "unsupported_action") assert.deepEqual(health, [], transcript);
        else assert.match(health.join("\n"), /^advice: .*"unsupported_action" fits/, transcript);
      } finally {
        await server.close();
      }
    });
  }

  it("a provider whose describe declares health but which answers health with 400 fails the health case", async () => {
    const server = await startServer(strictV1(400, "invalid_request", ["health"]));
    try {
      const report = await runConformance(server.url, { name: "broken", scope: "broken" });
      const transcript = formatTranscript(report);
      assert.equal(verdicts(report).describe, "pass", transcript);
      assert.deepEqual(failedCases(report), ["health", "unsupported-action"], transcript);
      const health = report.cases.find((c) => c.case === "health");
      assert.deepEqual(health?.reasons, ["expected HTTP 200, got 400"], transcript);
    } finally {
      await server.close();
    }
  });
});

const ERROR_VERSION = "tracefetch.provider-error.v1";
const SEARCH = JSON.stringify({
  schema_version: "tracefetch.provider-request.v1",
  action: "search",
  query: "deadline",
  limit: 3,
});
const post = (app: ReturnType<typeof serveProvider>, body = SEARCH, headers = {}) =>
  app.request("/search", {
    method: "POST",
    body,
    headers: { "content-type": "application/json", ...headers },
  });

function adapter(search: SearchAdapter["search"]): SearchAdapter & { calls: number } {
  const a = {
    name: "p",
    scope: "s",
    calls: 0,
    search: (r: { query: string; limit: number }, signal: AbortSignal) => {
      a.calls++;
      return search(r, signal);
    },
  };
  return a;
}

describe("serveProvider", () => {
  it("a verify hook that refuses answers its own response and never calls the adapter", async () => {
    const a = adapter(() => Promise.resolve({ candidates: [] }));
    const app = serveProvider(a, {
      verify: (request) =>
        Promise.resolve(
          request.headers.get("authorization") === "Bearer good"
            ? null
            : new Response("no entry", { status: 401 }),
        ),
    });
    const res = await post(app);
    assert.equal(res.status, 401);
    assert.equal(await res.text(), "no entry");
    assert.equal(a.calls, 0);
    const allowed = await post(app, SEARCH, { authorization: "Bearer good" });
    assert.equal(allowed.status, 200);
    assert.equal(a.calls, 1);
  });

  it("a verify hook that throws refuses with a search_failed error body (fail closed)", async () => {
    const a = adapter(() => Promise.resolve({ candidates: [] }));
    const app = serveProvider(a, { verify: () => Promise.reject(new Error("keys unreachable")) });
    const res = await post(app);
    assert.equal(res.status, 500);
    assert.equal((await res.json()).code, "search_failed");
    assert.equal(a.calls, 0);
  });

  it("ProviderError rate_limited with 2000 ms is a 429 with Retry-After 2 and the error body", async () => {
    const app = serveProvider(
      adapter(() =>
        Promise.reject(new ProviderError("rate_limited", "quota exhausted", { retryAfterMs: 2000 }))
      ),
    );
    const res = await post(app);
    assert.equal(res.status, 429);
    assert.equal(res.headers.get("retry-after"), "2");
    assert.deepEqual(await res.json(), {
      schema_version: ERROR_VERSION,
      code: "rate_limited",
      message: "quota exhausted",
      retry_after_ms: 2000,
    });
  });

  it("a ProviderError with retryable: false says so in the error body; without, the body has no retryable", async () => {
    const refused = serveProvider(adapter(() =>
      Promise.reject(
        new ProviderError("adapter_unavailable", "key rejected", { retryable: false }),
      )
    ));
    const res = await post(refused);
    assert.equal(res.status, 503);
    assert.deepEqual(await res.json(), {
      schema_version: ERROR_VERSION,
      code: "adapter_unavailable",
      message: "key rejected",
      retryable: false,
    });
    const plain = serveProvider(
      adapter(() => Promise.reject(new ProviderError("adapter_unavailable", "down for a moment"))),
    );
    assert.equal("retryable" in await (await post(plain)).json(), false);
  });

  it("a plain Error is a 500 search_failed whose message has its secret redacted", async () => {
    const secret = "sk-live0123456789abcdefXYZ";
    const app = serveProvider(
      adapter(() => Promise.reject(new Error(`upstream refused api_key=${secret}`))),
    );
    const res = await post(app);
    const text = await res.text();
    assert.equal(res.status, 500);
    assert.ok(!text.includes(secret), text);
    const body = JSON.parse(text);
    assert.equal(body.schema_version, ERROR_VERSION);
    assert.equal(body.code, "search_failed");
    assert.match(body.message, /upstream refused api_key=\[redacted\]/);
  });

  it("keeps at most 20 warnings, each redacted and bounded, and clips candidates to limit", async () => {
    const app = serveProvider(adapter(() =>
      Promise.resolve({
        candidates: [1, 2, 3, 4].map((i) => ({
          title: `T${i}`,
          locator: `https://x.example/${i}`,
        })),
        warnings: Array.from(
          { length: 30 },
          (_, i) => `w${i} token=abcdefgh12345 ${"x".repeat(600)}`,
        ),
      })
    ));
    const body = await (await post(app)).json();
    assert.equal(body.candidates.length, 3);
    assert.equal(body.warnings.length, 20);
    for (const w of body.warnings as string[]) {
      assert.ok(!w.includes("abcdefgh12345"), w);
      assert.ok(Array.from(w).length <= 500);
    }
  });

  it("refuses other actions with 501 and malformed requests with 400, with error bodies", async () => {
    const a = adapter(() => Promise.resolve({ candidates: [] }));
    const app = serveProvider(a);
    // An action the adapter does not implement is refused before its request is read.
    for (const action of ["health", "expand", "refresh", "no-such-action"]) {
      const res = await post(app, JSON.stringify({ schema_version: "x", action }));
      assert.equal(res.status, 501);
      assert.equal((await res.json()).code, "unsupported_action");
    }
    for (
      const body of [
        "{",
        JSON.stringify({ schema_version: "x", action: "search" }),
        JSON.stringify({ schema_version: "x", action: "describe" }),
      ]
    ) {
      const res = await post(app, body);
      assert.equal(res.status, 400);
      assert.equal((await res.json()).code, "invalid_request");
    }
    assert.equal(a.calls, 0);
  });
});

describe("checkBounds: exactly what the gateway's sanitiser would cut", () => {
  const answerWith = (metadata: Record<string, unknown>) => ({
    schema_version: "tracefetch.provider-response.v1" as const,
    provider: "p",
    scope: "p",
    candidates: [{ title: "t", locator: "https://x.example/1", metadata }],
  });
  const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));

  it("32 keys and a secret-named one: the secret key is reported, and no key count, since all 32 are kept", () => {
    const metadata = { ...keys(32), api_key: "k" };
    assert.equal(Object.keys(sanitiseMetadata(metadata)).length, 32);
    assert.deepEqual(checkBounds(answerWith(metadata)), [
      'candidates[0].metadata key "api_key" looks like a secret; the gateway would remove it',
    ]);
  });

  it("33 keys: the count is reported, as the gateway keeps 32", () => {
    assert.equal(Object.keys(sanitiseMetadata(keys(33))).length, 32);
    assert.deepEqual(checkBounds(answerWith(keys(33))), [
      "candidates[0].metadata has 33 keys; the gateway keeps at most 32",
    ]);
  });

  it("a nested list too long, a string too long, nesting too deep and a prototype key, with their paths", () => {
    const problems = checkBounds(answerWith({
      tags: Array.from({ length: 21 }, (_, i) => `t${i}`),
      note: "n".repeat(1_001),
      deep: { deeper: { deepest: 1 } },
      ["__proto__"]: 1,
    }));
    assert.deepEqual(problems.sort(), [
      "candidates[0].metadata.__proto__ names a prototype; the gateway would drop it",
      "candidates[0].metadata.deep.deeper nests deeper than 2 levels; the gateway would drop it",
      "candidates[0].metadata.note is longer than 1000 code points; the gateway would cut it",
      "candidates[0].metadata.tags has 21 items; the gateway keeps at most 20",
    ]);
  });

  it("a conforming answer has no problem", () => {
    assert.deepEqual(checkBounds(answerWith({ stars: 7, tags: ["a", "b"] })), []);
  });
});
