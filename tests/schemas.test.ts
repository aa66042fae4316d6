import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import * as v from "valibot";
import {
  ENVELOPE_CODES,
  parseSearchRequest,
  ProviderRequestSchema,
  ProviderResponseSchema,
  validateManifest,
} from "../src/protocol/mod.ts";
import { buildEnvelope, codeRow, CODES } from "../src/envelope/mod.ts";
import type { CodeRow } from "../src/envelope/mod.ts";
import { raw, startServer } from "./support/servers.ts";
import { SCHEMA_NAMES } from "../src/protocol/schema-names.ts";
import { assertEnvelope, gateway, search, validators } from "./support/gateway.ts";

const ROOT = decodeURIComponent(new URL("..", import.meta.url).pathname);
const schemaFile = (name: string) =>
  JSON.parse(readFileSync(new URL(`../schemas/${name}.json`, import.meta.url), "utf8"));

// The examples of docs/protocol.md and docs/envelope.md, copied verbatim.
const MANIFEST_EXAMPLE = {
  "schema_version": "tracefetch.providers.v1",
  "providers": [
    {
      "name": "papers",
      "scope": "papers",
      "endpoint": "https://papers.example.org/search",
      "timeout_seconds": 60,
      "sensitivity": "public",
      "source_class": "paper-candidate",
      "isolated": false,
      "cost_micros": 0,
      "weight": 1.0,
      "max_concurrency": 16,
      "auth": { "type": "gateway-token" },
    },
  ],
  "tiers": { "fast": { "cost_ceiling_micros": 0 }, "balanced": { "cost_ceiling_micros": 20000 } },
  "default_tier": "balanced",
};
const PROVIDER_REQUEST_EXAMPLE = {
  "schema_version": "tracefetch.provider-request.v1",
  "action": "search",
  "query": "actor isolation",
  "limit": 8,
};
const PROVIDER_RESPONSE_EXAMPLE = {
  "schema_version": "tracefetch.provider-response.v1",
  "provider": "papers",
  "scope": "papers",
  "candidates": [{
    "title": "Structured Concurrency",
    "locator": "https://example.org/paper",
    "snippet": "Candidate abstract",
    "published_at": "2025-01-01",
    "metadata": { "citation_count": 12 },
  }],
  "warnings": [],
};
const SEARCH_REQUEST_EXAMPLE = {
  "version": 1,
  "query": "actor isolation",
  "scope": "auto",
  "providers": ["papers"],
  "limit": 8,
  "tier": "balanced",
  "view": "full",
  "timeout_ms": 8000,
};

describe("generated JSON Schemas", () => {
  it("match what scripts/gen-schemas.ts generates (--check exits 0)", () => {
    const run = spawnSync("node", ["--import", "tsx", "scripts/gen-schemas.ts", "--check"], {
      cwd: ROOT,
      encoding: "utf8",
      timeout: 60_000,
    });
    assert.equal(run.status, 0, run.stderr);
  });

  it("render as draft 2020-12 documents with an $id and a title", () => {
    // renderSchema is imported in a child with --check: importing the script also runs it, and
    // without --check that would rewrite schemas/ under the other tests.
    const code = `const { renderSchema } = await import("./scripts/gen-schemas.ts");
      process.stdout.write(JSON.stringify(${
      JSON.stringify(SCHEMA_NAMES)
    }.map((n) => renderSchema(n))));`;
    const run = spawnSync(
      "node",
      ["--import", "tsx", "--input-type=module", "-e", code, "--", "--check"],
      { cwd: ROOT, encoding: "utf8", timeout: 60_000 },
    );
    assert.equal(run.status, 0, run.stderr);
    const rendered = JSON.parse(run.stdout) as string[];
    for (const [i, name] of SCHEMA_NAMES.entries()) {
      const text = rendered[i] ?? "";
      assert.ok(text.endsWith("}\n"));
      const document = JSON.parse(text);
      assert.equal(document.$schema, "https://json-schema.org/draft/2020-12/schema");
      assert.equal(document.$id, `https://tracefetch.dev/schemas/${name}.json`);
      assert.equal(typeof document.title, "string");
      assert.deepEqual(document, schemaFile(name));
    }
  });

  it("list exactly the envelope codes of the code list", () => {
    assert.deepEqual(schemaFile("envelope").properties.code.enum, [...ENVELOPE_CODES]);
  });
});

describe("the documented examples validate against both the JSON Schemas and valibot", () => {
  it("accepts a manifest example with every field", () => {
    assert.ok(validators.manifest(MANIFEST_EXAMPLE), JSON.stringify(validators.manifest.errors));
    const result = validateManifest(MANIFEST_EXAMPLE, { allowLoopback: false });
    assert.equal(result.ok, true);
    assert.equal(result.ok && result.manifest.providers[0]?.source_class, "paper-candidate");
  });

  it("accepts the provider request and response examples of docs/protocol.md", () => {
    assert.ok(validators.providerRequest(PROVIDER_REQUEST_EXAMPLE));
    assert.ok(
      validators.providerResponse(PROVIDER_RESPONSE_EXAMPLE),
      JSON.stringify(validators.providerResponse.errors),
    );
    assert.equal(v.safeParse(ProviderRequestSchema, PROVIDER_REQUEST_EXAMPLE).success, true);
    assert.equal(v.safeParse(ProviderResponseSchema, PROVIDER_RESPONSE_EXAMPLE).success, true);
  });

  it("accepts the search request example of docs/envelope.md", () => {
    assert.ok(validators.searchRequest(SEARCH_REQUEST_EXAMPLE));
    assert.deepEqual(parseSearchRequest(SEARCH_REQUEST_EXAMPLE), {
      ok: true,
      request: {
        query: "actor isolation",
        scope: "auto",
        providers: ["papers"],
        limit: 8,
        tier: "balanced",
        view: "full",
        timeout_ms: 8000,
      },
    });
  });

  it("refuses an unknown field in each, in both validators", () => {
    const cases = [
      [validators.manifest, { ...MANIFEST_EXAMPLE, extra: 1 }],
      [validators.providerRequest, { ...PROVIDER_REQUEST_EXAMPLE, extra: 1 }],
      [validators.providerResponse, { ...PROVIDER_RESPONSE_EXAMPLE, extra: 1 }],
      [validators.searchRequest, { ...SEARCH_REQUEST_EXAMPLE, extra: 1 }],
    ] as const;
    for (const [validate, value] of cases) assert.equal(validate(value), false);
    assert.equal(validateManifest(cases[0][1], { allowLoopback: false }).ok, false);
    assert.equal(v.safeParse(ProviderRequestSchema, cases[1][1]).success, false);
    assert.equal(v.safeParse(ProviderResponseSchema, cases[2][1]).success, false);
    assert.equal(parseSearchRequest(cases[3][1]).ok, false);
    // Version 1 needs candidates: a missing list is never an honest empty.
    const { candidates: _c, ...noCandidates } = PROVIDER_RESPONSE_EXAMPLE;
    assert.equal(validators.providerResponse(noCandidates), false);
    assert.equal(v.safeParse(ProviderResponseSchema, noCandidates).success, false);
  });
});

describe("GET /schemas/<name>.json", () => {
  it("answers the raw schema document, not an envelope", async () => {
    const app = gateway([]);
    for (const name of SCHEMA_NAMES) {
      const res = await app.request(`/schemas/${name}.json`);
      assert.equal(res.status, 200);
      const document = await res.json();
      assert.deepEqual(document, schemaFile(name));
      assert.equal(document.ok, undefined);
    }
  });

  it("answers an unknown schema with a not_found envelope", async () => {
    const app = gateway([]);
    for (const path of ["/schemas/nope.json", "/schemas/envelope", "/schemas/__proto__.json"]) {
      const res = await app.request(path);
      const body = assertEnvelope(await res.json());
      assert.equal(res.status, 404);
      const header = [body.command, body.code, body.exit_code, body.action, body.ok];
      assert.deepEqual(header, ["schema", "not_found", 2, "fix_input", false]);
    }
  });
});

type Row = [exit: number, status: string, action: string, http: number];
const usage = (http = 400): Row => [2, "usage_error", "fix_input", http];
/** docs/envelope.md's code table, row by row; HTTP 0 marks the codes only the CLI produces ("-" there). */
const DESIGN_TABLE: Record<string, Row> = {
  ok: [0, "ok", "none", 200],
  partial: [0, "ok", "none", 200],
  invalid_json: usage(),
  invalid_utf8: usage(),
  body_too_large: usage(413),
  unsupported_media_type: usage(415),
  unknown_field: usage(),
  null_field: usage(),
  invalid_field: usage(),
  query_empty: usage(),
  query_too_long: usage(),
  limit_out_of_range: usage(),
  timeout_out_of_range: usage(),
  unknown_scope: usage(),
  unknown_provider: usage(),
  unknown_tier: usage(),
  provider_not_in_scope: usage(),
  isolation_conflict: usage(),
  no_providers_selected: usage(),
  not_found: usage(404),
  method_not_allowed: usage(405),
  bad_request: usage(),
  headers_too_large: usage(431),
  unauthorized: [3, "client_error", "login", 401],
  token_invalid: [3, "client_error", "login", 401],
  token_expired: [3, "client_error", "login", 401],
  forbidden: [3, "client_error", "check_access", 403],
  insufficient_scope: [3, "client_error", "check_access", 403],
  overloaded: [3, "client_error", "retry", 429],
  rate_limited: [3, "client_error", "retry", 429],
  request_timeout: [3, "client_error", "retry", 408],
  all_providers_failed: [4, "server_error", "report", 503],
  auth_unavailable: [4, "server_error", "retry", 503],
  internal_error: [4, "server_error", "report", 500],
  transport_error: [1, "transport_error", "retry", 0],
  gateway_timeout: [1, "transport_error", "retry", 0],
  bad_gateway_answer: [4, "server_error", "report", 0],
  human_decision_required: [3, "client_error", "connect", 0],
  locator_unknown: usage(404),
  locator_expired: usage(410),
  action_unsupported: usage(400),
  provider_failed: [4, "server_error", "report", 502],
  fetch_disabled: [3, "client_error", "check_access", 403],
  url_forbidden: usage(403),
  robots_disallowed: usage(403),
  too_many_redirects: usage(422),
  unsupported_content_type: usage(422),
  fetch_failed: [4, "server_error", "report", 502],
  state_unavailable: [4, "server_error", "retry", 503],
};

describe("envelope code table", () => {
  it("has exactly one row per envelope code", () => {
    assert.deepEqual(Object.keys(CODES).sort(), [...ENVELOPE_CODES].sort());
    assert.deepEqual(Object.keys(DESIGN_TABLE).sort(), [...ENVELOPE_CODES].sort());
  });

  it("matches docs/envelope.md's code table row by row", () => {
    for (const code of ENVELOPE_CODES) {
      const row = CODES[code];
      assert.deepEqual([row.exit, row.status, row.action, row.http], DESIGN_TABLE[code], code);
      assert.equal(row.retryable, row.action === "retry", `${code}: retryable iff action retry`);
    }
  });

  it("sets ok exactly when the exit code is 0", () => {
    for (const code of ENVELOPE_CODES) {
      const envelope = buildEnvelope("search", code, "r1");
      assert.equal(envelope.ok, envelope.exit_code === 0, code);
      assert.ok(validators.envelope(envelope), code);
    }
  });

  it("says retry for all_providers_failed, provider_failed and fetch_failed when a failure was retryable, report otherwise", () => {
    const rowOf = (r: CodeRow) => [r.exit, r.status, r.action, r.retryable, r.http];
    assert.deepEqual(rowOf(codeRow("all_providers_failed", true)), [
      4,
      "server_error",
      "retry",
      true,
      503,
    ]);
    assert.deepEqual(rowOf(codeRow("all_providers_failed", false)), [
      4,
      "server_error",
      "report",
      false,
      503,
    ]);
    assert.deepEqual(rowOf(codeRow("provider_failed", true)), [
      4,
      "server_error",
      "retry",
      true,
      502,
    ]);
    assert.deepEqual(rowOf(codeRow("fetch_failed", true)), [
      4,
      "server_error",
      "retry",
      true,
      502,
    ]);
    // No other code depends on it.
    assert.deepEqual(codeRow("internal_error", true), CODES.internal_error);
  });
});

describe("a search where every provider fails", () => {
  /** [HTTP statuses the providers answer, expected action, the attempts' retryable flags]. */
  const cases: Array<[number[], string, boolean[]]> = [
    [[500], "retry", [true]],
    [[500, 404], "retry", [true, false]],
    [[404, 404], "report", [false, false]],
  ];
  for (const [statuses, action, retryable] of cases) {
    it(`answers 503 all_providers_failed with action ${action} for providers answering ${statuses}`, async () => {
      const servers = await Promise.all(
        statuses.map((status) => startServer(raw(status, JSON.stringify({ error: "no" })))),
      );
      try {
        const app = gateway(servers.map((s, i) => ({ name: `p${i}`, endpoint: s.url })));
        const { res, body } = await search(app);
        const header = [
          body.ok,
          body.exit_code,
          body.status,
          body.code,
          body.action,
          body.retryable,
        ];
        assert.deepEqual([res.status, ...header], [
          503,
          false,
          4,
          "server_error",
          "all_providers_failed",
          action,
          action === "retry",
        ]);
        assert.equal(typeof body.error.message, "string");
        // deno-lint-ignore no-explicit-any
        const attempts = body.result.candidates.map((c: any) => [c.outcome, c.retryable]);
        assert.deepEqual(attempts, retryable.map((r) => ["search_failed", r]));
        assert.deepEqual(body.result.merged, []);
      } finally {
        await Promise.all(servers.map((s) => s.close()));
      }
    });
  }
});
