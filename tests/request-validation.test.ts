import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { answer, startServer } from "./support/servers.ts";
import type { TestServer } from "./support/servers.ts";
import {
  assertEnvelope,
  gateway,
  manifestOf,
  post,
  search,
  settingsFor,
} from "./support/gateway.ts";
import type { ProviderEntry } from "./support/gateway.ts";
import { createGateway } from "../src/http/mod.ts";

const MIB = 1_048_576;

type Fixture = { app: ReturnType<typeof gateway>; servers: Record<string, TestServer> };

/** Starts one real provider per name, builds a gateway over them, and closes them afterwards. */
async function withProviders(
  entries: ProviderEntry[],
  extra: Record<string, unknown>,
  fn: (f: Fixture) => Promise<void>,
): Promise<void> {
  const servers: Record<string, TestServer> = {};
  try {
    for (const e of entries) {
      if (e.name === "exa") continue;
      const scope = typeof e.scope === "string" ? e.scope : e.name;
      servers[e.name] = await startServer(
        answer(e.name, scope, [{ title: `${e.name} hit`, locator: `https://x.org/${e.name}` }]),
      );
    }
    const providers = entries.map((e) =>
      servers[e.name] ? { ...e, endpoint: servers[e.name]?.url } : e
    );
    const app = createGateway(
      settingsFor(manifestOf(providers, extra), {}, {
        allowLoopback: true,
        describeProviders: false,
      }),
    );
    await fn({ app, servers });
  } finally {
    await Promise.all(Object.values(servers).map((s) => s.close()));
  }
}

/** papers and code are ordinary providers; vault is isolated. */
const withStandard = (fn: (f: Fixture) => Promise<void>) =>
  withProviders(
    [{ name: "papers" }, { name: "code" }, { name: "vault", isolated: true }],
    {},
    fn,
  );

/** POSTs a ReadableStream body, which carries no Content-Length. */
const postStream = (app: Fixture["app"], source: UnderlyingDefaultSource<Uint8Array>) =>
  app.request("/v1/search", {
    method: "POST",
    body: new ReadableStream<Uint8Array>(source),
    headers: { "content-type": "application/json" },
    duplex: "half",
  } as RequestInit);

const contacted = (f: Fixture) =>
  Object.values(f.servers).reduce((sum, s) => sum + s.requests.length, 0);

// deno-lint-ignore no-explicit-any
function assertRefused(res: Response, body: any, code: string, http: number, field?: string) {
  const header = [body.command, body.ok, body.exit_code, body.status, body.retryable, body.action];
  assert.deepEqual([res.status, body.code, body.error.field], [http, code, field]);
  assert.deepEqual(header, ["search", false, 2, "usage_error", false, "fix_input"]);
  assert.equal(typeof body.error.message, "string");
  assert.equal(body.result, undefined);
}

const utf8 = (text: string) => new TextEncoder().encode(text);
const JSON_TYPE = { "content-type": "application/json" };
const label = (value: unknown) => {
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 40)}... (${text.length} chars)` : text;
};

/** [code, JSON body, error.field]: each refused with HTTP 400. */
const REFUSED: Array<[string, unknown, string?]> = [
  ["unknown_field", { query: "x", colour: "red" }, "colour"],
  ["null_field", { query: "x", scope: null }, "scope"],
  ["query_empty", { query: "   " }, "query"],
  ["query_empty", { limit: 3 }, "query"],
  ["query_too_long", { query: "q".repeat(2001) }, "query"],
  ["limit_out_of_range", { query: "x", limit: 0 }, "limit"],
  ["limit_out_of_range", { query: "x", limit: 101 }, "limit"],
  ["limit_out_of_range", { query: "x", limit: 2.5 }, "limit"],
  ["timeout_out_of_range", { query: "x", timeout_ms: 0 }, "timeout_ms"],
  ["timeout_out_of_range", { query: "x", timeout_ms: 300_001 }, "timeout_ms"],
  ["invalid_json", [{ query: "x" }]],
  ["unknown_scope", { query: "x", scope: "nowhere" }, "scope"],
  ["unknown_provider", { query: "x", providers: ["ghost"] }, "providers"],
  ["provider_not_in_scope", { query: "x", scope: "papers", providers: ["code"] }, "providers"],
  // No workspace is declared, so scope local selects nothing.
  ["no_providers_selected", { query: "x", scope: "local" }, "scope"],
  ["isolation_conflict", { query: "x", providers: ["vault", "papers"] }, "providers"],
  ["unknown_tier", { query: "x", tier: "turbo" }, "tier"],
];

/** [what, code, HTTP status, raw body, request headers]. */
const REFUSED_RAW: Array<[string, string, number, BodyInit, Record<string, string>]> = [
  ["a body that is not JSON", "invalid_json", 400, '{"query": "x"', JSON_TYPE],
  [
    "invalid UTF-8",
    "invalid_utf8",
    400,
    new Uint8Array([...utf8('{"query":"'), 0xff, 34, 125]),
    JSON_TYPE,
  ],
  ["content-type text/plain", "unsupported_media_type", 415, '{"query":"x"}', {
    "content-type": "text/plain",
  }],
  // Exactly one byte over: the Content-Length alone decides.
  [
    "over 1 MiB with Content-Length",
    "body_too_large",
    413,
    `{"query":"x"}${" ".repeat(MIB - 12)}`,
    {
      ...JSON_TYPE,
      "content-length": String(MIB + 1),
    },
  ],
];

describe("POST /v1/search refuses a wrong request before contacting any provider", () => {
  for (const [code, value, field] of REFUSED) {
    it(`refuses ${label(value)} with ${code}`, () =>
      withStandard(async (f) => {
        const { res, body } = await post(f.app, JSON.stringify(value));
        assertRefused(res, body, code, 400, field);
        assert.equal(contacted(f), 0);
      }));
  }

  for (const [what, code, http, value, headers] of REFUSED_RAW) {
    it(`refuses ${what} with ${http} ${code}`, () =>
      withStandard(async (f) => {
        const { res, body } = await post(f.app, value, headers);
        assertRefused(res, body, code, http);
        assert.equal(contacted(f), 0);
      }));
  }

  it("refuses a streamed body over 1 MiB without Content-Length with 413, reading no further", () =>
    withStandard(async (f) => {
      const chunk = new Uint8Array(64 * 1024).fill(0x20);
      let pulled = 0;
      const res = await postStream(f.app, {
        pull(controller) {
          if (pulled === 0) controller.enqueue(utf8('{"query":"x"}'));
          if (pulled >= 8 * MIB) return controller.close();
          pulled += chunk.byteLength;
          controller.enqueue(chunk);
        },
      });
      assertRefused(res, assertEnvelope(await res.json()), "body_too_large", 413);
      assert.ok(pulled < 2 * MIB, `read ${pulled} bytes of an 8 MiB body`);
      assert.equal(contacted(f), 0);
    }));
});

describe("POST /v1/search accepts requests at the bounds", () => {
  const accepted = (value: BodyInit, headers: Record<string, string> = JSON_TYPE) =>
    withStandard(async (f) => {
      const { res, body } = await post(f.app, value, headers);
      assert.deepEqual([res.status, body.code], [200, "ok"]);
      assert.deepEqual(body.result.decision.providers, ["papers"]);
      assert.equal(f.servers.papers?.requests.length, 1);
    });
  const papersOnly = '{"query":"q","providers":["papers"]}';

  it("accepts a body of exactly 1 MiB", () =>
    accepted(`${papersOnly}${" ".repeat(MIB - papersOnly.length)}`, {
      ...JSON_TYPE,
      "content-length": String(MIB),
    }));

  it("accepts a body that starts with a UTF-8 BOM", () =>
    accepted(new Uint8Array([0xef, 0xbb, 0xbf, ...utf8(papersOnly)])));

  it("accepts a query of 2000 chars, limit 1 and 100, timeout_ms 1 and 300000", async () => {
    const only = { providers: ["papers"] };
    await accepted(JSON.stringify({ query: "q".repeat(2000), ...only }));
    await accepted(JSON.stringify({ query: "q", limit: 1, timeout_ms: 300_000, ...only }));
    await accepted(JSON.stringify({ query: "q", limit: 100, ...only }));
  });

  it("accepts a small streamed body without Content-Length", () =>
    withStandard(async (f) => {
      const res = await postStream(f.app, {
        start(controller) {
          controller.enqueue(utf8('{"query":"x","providers":["papers"]}'));
          controller.close();
        },
      });
      const body = assertEnvelope(await res.json());
      assert.deepEqual([res.status, body.result.decision.providers], [200, ["papers"]]);
    }));
});

describe("GET /v1/search, unknown routes and methods, request ids", () => {
  /** [path, method, HTTP status, command, code, error.field]. */
  const cases: Array<[string, string, number, string, string, string?]> = [
    ["/v1/search?q=x&colour=red", "GET", 400, "search", "unknown_field", "colour"],
    ["/v1/search?limit=3", "GET", 400, "search", "query_empty", "query"],
    ["/v1/nope", "GET", 404, "unknown", "not_found"],
    ["/v1/search", "DELETE", 405, "search", "method_not_allowed"],
  ];
  for (const [path, method, http, command, code, field] of cases) {
    it(`answers ${method} ${path} with ${http} ${code} (command ${command})`, () =>
      withStandard(async (f) => {
        const res = await f.app.request(path, { method });
        const body = assertEnvelope(await res.json());
        assert.deepEqual([res.status, body.command, body.code, body.error.field], [
          http,
          command,
          code,
          field,
        ]);
        assert.deepEqual([body.ok, body.exit_code, body.status, body.action], [
          false,
          2,
          "usage_error",
          "fix_input",
        ]);
        assert.equal(contacted(f), 0);
      }));
  }

  it("echoes a well-formed x-request-id and replaces a malformed one", () =>
    withStandard(async (f) => {
      for (const id of ["abc.DEF_1-2", "a".repeat(64)]) {
        const headers = { "x-request-id": id };
        const { res, body } = await search(f.app, { providers: "papers" }, { headers });
        assert.deepEqual([body.request_id, res.headers.get("x-request-id")], [id, id]);
      }
      for (const id of ["bad id!", "a".repeat(65), "ünïcode", "a/b"]) {
        const res = await f.app.request("/v1/nope", { headers: { "x-request-id": id } });
        const body = assertEnvelope(await res.json());
        assert.notEqual(body.request_id, id);
        assert.match(body.request_id, /^[A-Za-z0-9._-]{1,64}$/);
        assert.equal(res.headers.get("x-request-id"), body.request_id);
      }
    }));
});

const TIERS = {
  tiers: { fast: { cost_ceiling_micros: 0 }, balanced: { cost_ceiling_micros: 20_000 } },
};
const COSTED: ProviderEntry[] = [
  { name: "t0", cost_micros: 0 },
  { name: "t1", cost_micros: 15_000 },
  { name: "t2", cost_micros: 10_000 },
  { name: "t3", cost_micros: 5_000 },
];
// deno-lint-ignore no-explicit-any
const attempted = (body: any) =>
  body.result.candidates.map((c: { provider: string }) => c.provider);
const counts = (f: Fixture) => COSTED.map((p) => f.servers[p.name]?.requests.length);

describe("planning: tiers, disabled and unconfigured providers", () => {
  it("walks providers in manifest order under the tier's ceiling, trimming what does not fit", () =>
    withProviders(COSTED, TIERS, async (f) => {
      const { res, body } = await search(f.app, { tier: "balanced" });
      assert.equal(res.status, 200);
      assert.equal(body.code, "ok");
      assert.deepEqual(body.result.decision, {
        tier: "balanced",
        providers: ["t0", "t1", "t3"],
        trimmed: [{ provider: "t2", reason: "cost_ceiling", cost_micros: 10_000 }],
        skipped: [],
        coalesced: false,
      });
      assert.deepEqual(counts(f), [1, 1, 0, 1]);
      assert.deepEqual(attempted(body), ["t0", "t1", "t3"]);
      assert.equal(body.result.usage.cost_micros, 20_000);
      assert.equal(body.result.coverage, "complete");
    }));

  it("keeps only free providers under a zero ceiling", () =>
    withProviders(COSTED, TIERS, async (f) => {
      const { body } = await search(f.app, { tier: "fast" });
      assert.deepEqual(body.result.decision.providers, ["t0"]);
      assert.deepEqual(
        body.result.decision.trimmed.map((t: { provider: string }) => t.provider),
        ["t1", "t2", "t3"],
      );
      assert.deepEqual(counts(f), [1, 0, 0, 0]);
    }));

  it("applies default_tier when the request names none, and no ceiling without either", async () => {
    await withProviders(COSTED, { ...TIERS, default_tier: "fast" }, async (f) => {
      const { body } = await search(f.app);
      assert.equal(body.result.decision.tier, "fast");
      assert.deepEqual(body.result.decision.providers, ["t0"]);
    });
    await withProviders(COSTED, TIERS, async (f) => {
      const { body } = await search(f.app);
      assert.equal(body.result.decision.tier, null);
      assert.deepEqual(body.result.decision.trimmed, []);
      assert.deepEqual(counts(f), [1, 1, 1, 1]);
    });
  });

  it("skips a disabled provider and an unconfigured built-in without making the search partial", () =>
    withProviders(
      [
        { name: "papers" },
        { name: "off", timeout_seconds: 0 },
        { name: "exa", scope: "web", cost_micros: 7_000 },
        { name: "dear", cost_micros: 50_000 },
      ],
      TIERS,
      async (f) => {
        const { res, body } = await search(f.app, { tier: "balanced" });
        assert.equal(res.status, 200);
        assert.equal(body.code, "ok");
        assert.equal(body.result.coverage, "complete");
        assert.deepEqual(body.result.decision, {
          tier: "balanced",
          providers: ["papers"],
          trimmed: [{ provider: "dear", reason: "cost_ceiling", cost_micros: 50_000 }],
          skipped: [
            { provider: "off", reason: "disabled" },
            { provider: "exa", reason: "not_configured" },
          ],
          coalesced: false,
        });
        assert.equal(f.servers.off?.requests.length, 0);
        assert.equal(f.servers.dear?.requests.length, 0);
        assert.deepEqual(attempted(body), ["papers"]);
        assert.equal(body.result.usage.cost_micros, 0);
      },
    ));
});
