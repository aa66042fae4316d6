/**
 * The attempt-outcome table (docs/protocol.md) for answers that arrive: HTTP statuses, provider
 * error bodies, and 2xx answers the gateway cannot use. Each case searches a faulty provider next
 * to a healthy one through a real gateway over 127.0.0.1.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { gateway, search } from "./support/gateway.ts";
import { answer, type Handler, startServer } from "./support/servers.ts";
import {
  assertFailed,
  assertNoLeak,
  type Expected,
  faultySearch,
  HEALTHY,
  LEAKY_HEADERS,
  responseBody,
  SECRET,
} from "./support/outcomes.ts";

const ERROR_VERSION = "tracefetch.provider-error.v1";

function reply(status: number, body: string | Uint8Array, headers: Record<string, string> = {}) {
  const handler: Handler = (_req, res) => {
    res.writeHead(status, { "content-type": "application/json", ...LEAKY_HEADERS, ...headers });
    res.end(body);
  };
  return handler;
}

describe("provider outcomes: success", () => {
  it("a provider with candidates is a success and its candidates are merged", async () => {
    const server = await startServer(answer("a", "a", [HEALTHY]));
    try {
      const { res, body } = await search(gateway([{ name: "a", endpoint: server.url }]));
      assert.equal(res.status, 200);
      assert.equal(body.code, "ok");
      const [attempt] = body.result.candidates;
      assert.equal(attempt.outcome, "success");
      assert.equal(attempt.code, "ok");
      assert.equal(attempt.retryable, false);
      assert.equal(attempt.candidate_count, 1);
      assert.equal(attempt.candidates[0].locator, HEALTHY.locator);
      assert.deepEqual(attempt.candidates[0].truncated, []);
      assert.equal(body.result.merged[0].locator, HEALTHY.locator);
      assert.equal(body.result.coverage, "complete");
    } finally {
      await server.close();
    }
  });

  it("zero candidates is an honest empty: success, code ok, and the search is ok, not partial", async () => {
    const run = await faultySearch(reply(200, responseBody("faulty", [])));
    assert.equal(run.res.status, 200);
    assert.equal(run.body.code, "ok");
    assert.equal(run.body.exit_code, 0);
    assert.equal(run.body.result.coverage, "complete");
    assert.equal(run.attempt.outcome, "success");
    assert.equal(run.attempt.code, "ok");
    assert.equal(run.attempt.retryable, false);
    assert.equal(run.attempt.candidate_count, 0);
    assert.deepEqual(run.attempt.candidates, []);
    assert.equal(run.body.result.merged.length, 1);
    assert.deepEqual(run.body.result.merged[0].found_by, ["healthy"]);
    assertNoLeak(run);
  });
});

describe("provider outcomes: non-2xx statuses and provider-error bodies", () => {
  const cases: Array<[string, Handler, Expected]> = [
    [
      "an HTTP 500 is search_failed and retryable",
      reply(500, `internal error near ${SECRET}`, { "content-type": "text/plain" }),
      { outcome: "search_failed", code: "search_failed", retryable: true },
    ],
    [
      "an HTTP 404 is search_failed and not retryable",
      reply(404, `no such route ${SECRET}`, { "content-type": "text/html" }),
      { outcome: "search_failed", code: "search_failed", retryable: false },
    ],
    [
      "a 429 with Retry-After: 3 is rate_limited, retryable, with retry_after_ms 3000",
      reply(429, "", { "retry-after": "3" }),
      { outcome: "search_failed", code: "rate_limited", retryable: true, retry_after_ms: 3000 },
    ],
    [
      "a provider-error body's code and retry_after_ms are used over the status and header",
      reply(
        503,
        JSON.stringify({
          schema_version: ERROR_VERSION,
          code: "rate_limited",
          message: "slow down",
          retry_after_ms: 1500,
        }),
        { "retry-after": "3" },
      ),
      { outcome: "search_failed", code: "rate_limited", retryable: true, retry_after_ms: 1500 },
    ],
    [
      "a provider-error body with code invalid_request on a 400 is invalid_request, not retryable",
      reply(
        400,
        JSON.stringify({ schema_version: ERROR_VERSION, code: "invalid_request", message: "no" }),
      ),
      { outcome: "search_failed", code: "invalid_request", retryable: false },
    ],
    [
      "an error body with an unknown code falls back to the status (400: not retryable)",
      reply(400, JSON.stringify({ schema_version: ERROR_VERSION, code: "teapot" })),
      { outcome: "search_failed", code: "search_failed", retryable: false },
    ],
    [
      "an error body that is not JSON falls back to the status (502: retryable)",
      reply(502, `{"schema_version":"${ERROR_VERSION}","code":"invalid_req`),
      { outcome: "search_failed", code: "search_failed", retryable: true },
    ],
    [
      "an error body with a wrong schema_version falls back to the status (429: rate_limited)",
      reply(429, JSON.stringify({ schema_version: "other.v1", code: "invalid_request" }), {
        "retry-after": "2",
      }),
      { outcome: "search_failed", code: "rate_limited", retryable: true, retry_after_ms: 2000 },
    ],
  ];
  for (const [name, handler, expected] of cases) {
    it(name, async () => {
      assertFailed(await faultySearch(handler), expected);
    });
  }

  it("a provider-error message is redacted and bounded: bearer values and token= never reach the caller", async () => {
    const message = `upstream said Bearer abcdef123456789 and token=supersecret ${"x".repeat(600)}`;
    const run = await faultySearch(
      reply(500, JSON.stringify({ schema_version: ERROR_VERSION, code: "search_failed", message })),
    );
    assertFailed(run, { outcome: "search_failed", code: "search_failed", retryable: true });
    assert.ok(
      run.attempt.message.startsWith(
        "the provider answered HTTP 500: upstream said Bearer [redacted] and token=[redacted] xxx",
      ),
      run.attempt.message,
    );
    assert.equal(Array.from(run.attempt.message).length, 320);
    assertNoLeak(run, ["abcdef123456789", "supersecret", SECRET]);
  });
});

describe("provider outcomes: 2xx answers the gateway cannot use", () => {
  it("a 302 is a protocol error, never followed: the Location server receives no request", async () => {
    const target = await startServer(answer("faulty", "faulty", [HEALTHY]));
    try {
      const run = await faultySearch(reply(302, "", { location: target.url }));
      assertFailed(run, { outcome: "provider_protocol_error", code: "redirect", retryable: false });
      assert.equal(run.requests.length, 1);
      assert.equal(target.requests.length, 0);
      assert.equal(run.text.includes(String(target.port)), false);
    } finally {
      await target.close();
    }
  });

  const cases: Array<[string, Handler, string]> = [
    [
      "a body that is not JSON under application/json is invalid_json",
      reply(200, `{"schema_version": oops ${SECRET}`),
      "invalid_json",
    ],
    [
      "bytes that are not UTF-8 are invalid_utf8",
      reply(200, new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d])),
      "invalid_utf8",
    ],
    [
      "a text/html answer is wrong_content_type",
      reply(200, `<html>${SECRET}</html>`, { "content-type": "text/html; charset=utf-8" }),
      "wrong_content_type",
    ],
    [
      "an answer naming another provider is identity_mismatch",
      reply(
        200,
        responseBody("faulty", [HEALTHY], { provider: "someone-else", scope: "faulty" }),
      ),
      "identity_mismatch",
    ],
    [
      "an answer naming another scope is identity_mismatch",
      reply(200, responseBody("faulty", [HEALTHY], { scope: "elsewhere" })),
      "identity_mismatch",
    ],
    [
      "a wrong schema_version is schema_violation",
      reply(
        200,
        responseBody("faulty", [HEALTHY], { schema_version: "tracefetch.provider-response.v2" }),
      ),
      "schema_violation",
    ],
    [
      "an unknown top-level field is schema_violation",
      reply(200, responseBody("faulty", [HEALTHY], { next_page: SECRET })),
      "schema_violation",
    ],
    [
      "an unknown candidate field is schema_violation",
      reply(200, responseBody("faulty", [{ ...HEALTHY, score: 0.9 }])),
      "schema_violation",
    ],
    [
      "a missing candidates field is schema_violation, never an honest empty",
      reply(
        200,
        JSON.stringify({
          schema_version: "tracefetch.provider-response.v1",
          provider: "faulty",
          scope: "faulty",
        }),
      ),
      "schema_violation",
    ],
  ];
  for (const [name, handler, code] of cases) {
    it(name, async () => {
      assertFailed(await faultySearch(handler), {
        outcome: "provider_protocol_error",
        code,
        retryable: false,
      });
    });
  }

  it("a schema violation's message names the offending field", async () => {
    const run = await faultySearch(reply(200, responseBody("faulty", [{ ...HEALTHY, score: 1 }])));
    assert.equal(
      run.attempt.message,
      "the answer does not match tracefetch.provider-response.v1: candidates.0.score is not a field of version 1",
    );
  });
});
