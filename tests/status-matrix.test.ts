/**
 * One status matrix through every transport: each failing status, with and without an error body,
 * reaches the caller as the same attempt record (outcome, code, retryable, retry_after_ms) whether
 * a remote provider answers it over HTTP, a built-in's third-party API answers it through the
 * upstream helper, or an in-process adapter throws it (as itself, and served by serveProvider).
 * Then every thrown ProviderError, in process and over HTTP; then a DNS failure in both
 * transports. Servers are real, on 127.0.0.1.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { serveProvider } from "../src/kit/serve-provider.ts";
import { PROVIDER_ERROR_CODES, type ProviderErrorCode } from "../src/protocol/codes.ts";
import {
  ProviderError,
  type ProviderErrorOptions,
  type SearchAdapter,
} from "../src/protocol/provider-contract.ts";
import { readProviderError } from "../src/protocol/provider-wire.ts";
import { listen } from "../src/runtime/node-listen.ts";
import { nodePorts } from "../src/runtime/node-fetch.ts";
import { exchangeOverFetch } from "../src/io/provider-exchange.ts";
import { ByteBudget } from "../src/io/byte-budget.ts";
import { failureFromStatus } from "../src/transport/classify-status.ts";
import { parseRetryAfter } from "../src/io/retry-after.ts";
import { httpProvider } from "../src/transport/http-provider.ts";
import { inProcessProvider } from "../src/transport/in-process-provider.ts";
import type { ProviderClient } from "../src/transport/provider-client.ts";
import { callJson, GET_JSON, upstream } from "../src/transport/upstream.ts";
import { startServer, type TestServer } from "./support/servers.ts";

const ERROR_VERSION = "tracefetch.provider-error.v1";
const NAME = "matrix";

/** Each runtime's production exchange with remote providers, as the gateway uses it. */
const providerExchange = "Deno" in globalThis
  ? exchangeOverFetch((input, init) => fetch(input, init))
  : nodePorts().exchange;

type AttemptRecord = {
  outcome: string;
  code: string;
  retryable: boolean;
  retry_after_ms: number | undefined;
};

async function recordOf(client: ProviderClient): Promise<AttemptRecord> {
  const result = await client.call({
    query: "deadline",
    limit: 3,
    requestId: "status-matrix",
    traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    signal: AbortSignal.timeout(5_000),
    budget: new ByteBudget(16_000_000),
    connectGate: null,
  });
  assert.equal(result.kind, "failure", JSON.stringify(result));
  if (result.kind !== "failure") throw new Error("unreachable");
  assert.ok(result.message.length > 0, "every failure says what happened");
  return {
    outcome: result.outcome,
    code: result.code,
    retryable: result.retryable,
    retry_after_ms: result.retry_after_ms,
  };
}

function overHttp(endpoint: string): ProviderClient {
  return httpProvider({
    name: NAME,
    scope: NAME,
    endpoint,
    exchange: providerExchange,
    now: () => Date.now(),
  });
}

/** A built-in over the upstream helper, calling `base` as its third-party API. */
function builtin(base: string): SearchAdapter {
  const up = upstream("the matrix API", {});
  return {
    name: NAME,
    scope: NAME,
    async search(_request, signal) {
      await callJson(up, base, GET_JSON, signal);
      return { candidates: [] };
    },
  };
}

function throwing(error: () => unknown): SearchAdapter {
  return { name: NAME, scope: NAME, search: () => Promise.reject(error()) };
}

/** Serves `adapter` with serveProvider on 127.0.0.1 and calls it over HTTP. */
async function served(adapter: SearchAdapter): Promise<AttemptRecord> {
  const server = await listen(serveProvider(adapter).fetch);
  try {
    return await recordOf(overHttp(`http://127.0.0.1:${server.port}/search`));
  } finally {
    await server.close();
  }
}

type Row = {
  status: number;
  retryAfter?: string;
  /** The error body as sent; none: an HTML page, as a proxy would answer. */
  body?: Record<string, unknown>;
  /** What the body says, for the test's name. */
  label?: string;
  expected: AttemptRecord;
};

const failed = (
  code: string,
  retryable: boolean,
  retry_after_ms?: number,
  outcome = "search_failed",
): AttemptRecord => ({ outcome, code, retryable, retry_after_ms });

/** The table, written out: what a bare status means. */
const BARE: Array<[number, string | undefined, AttemptRecord]> = [
  [400, undefined, failed("search_failed", false)],
  [401, undefined, failed("search_failed", false)],
  [403, undefined, failed("search_failed", false)],
  [404, undefined, failed("search_failed", false)],
  [408, undefined, failed("search_failed", true)],
  [409, undefined, failed("search_failed", false)],
  [429, undefined, failed("rate_limited", true)],
  [429, "3", failed("rate_limited", true, 3_000)],
  [500, undefined, failed("search_failed", true)],
  [502, undefined, failed("search_failed", true)],
  [503, undefined, failed("search_failed", true)],
];

const ROWS: Row[] = BARE.flatMap(([status, retryAfter, expected]) => {
  const at = retryAfter === undefined ? {} : { retryAfter };
  return [
    { status, ...at, expected },
    // A body that only explains changes nothing.
    {
      status,
      ...at,
      body: { schema_version: ERROR_VERSION, message: "the provider's own words" },
      label: "an error body with a message only",
      expected,
    },
    // A provider's false always holds.
    {
      status,
      ...at,
      body: { schema_version: ERROR_VERSION, message: "do not retry", retryable: false },
      label: "an error body saying retryable: false",
      expected: { ...expected, retryable: false },
    },
    // A provider's code wins over the status; its wait over the header.
    {
      status,
      ...at,
      body: { schema_version: ERROR_VERSION, code: "adapter_unavailable", retry_after_ms: 1_500 },
      label: "an error body saying adapter_unavailable, retry_after_ms 1500",
      expected: failed("adapter_unavailable", true, 1_500, "adapter_unavailable"),
    },
  ];
});

/** `search_failed / rate_limited, retryable, wait 3000 ms` */
const says = (r: AttemptRecord) =>
  `${r.outcome} / ${r.code}, ${r.retryable ? "retryable" : "not retryable"}${
    r.retry_after_ms === undefined ? "" : `, wait ${r.retry_after_ms} ms`
  }`;

const describeRow = (r: Row) =>
  `HTTP ${r.status}${r.retryAfter ? ` with Retry-After ${r.retryAfter}` : ""}${
    r.label ? ` and ${r.label}` : " without an error body"
  }`;

describe("status matrix: one record per status, whichever transport", () => {
  let server: TestServer;
  /** The row the server answers next; the tests run one at a time. */
  let current: Row;
  before(async () => {
    server = await startServer((_req, res) => {
      const headers: Record<string, string> = {
        "content-type": current.body ? "application/json" : "text/html",
        ...(current.retryAfter === undefined ? {} : { "retry-after": current.retryAfter }),
      };
      res.writeHead(current.status, headers);
      res.end(current.body ? JSON.stringify(current.body) : "<h1>nope</h1>");
    });
  });
  after(() => server.close());

  for (const row of ROWS) {
    it(`${describeRow(row)} is ${says(row.expected)}`, async () => {
      current = row;
      const base = `http://127.0.0.1:${server.port}/search`;
      // What an in-process adapter that met this answer throws: the one table's ProviderError.
      const thrown = () =>
        failureFromStatus(row.status, {
          body: readProviderError(row.body ?? null),
          retryAfterMs: parseRetryAfter(row.retryAfter ?? null, Date.now()),
        });
      const records: Array<[string, AttemptRecord]> = [
        ["a remote provider over HTTP", await recordOf(overHttp(base))],
        ["a built-in over the upstream helper", await recordOf(inProcessProvider(builtin(base)))],
        ["an in-process adapter", await recordOf(inProcessProvider(throwing(thrown)))],
        ["the same adapter served by serveProvider", await served(throwing(thrown))],
      ];
      for (const [transport, record] of records) {
        assert.deepEqual(record, row.expected, transport);
      }
    });
  }
});

describe("status matrix: a thrown ProviderError is the same attempt in process and over HTTP", () => {
  /** What each code is, before a provider's retryable: false. */
  const TABLE: Record<ProviderErrorCode, { outcome: string; retryable: boolean; waits: boolean }> =
    {
      rate_limited: { outcome: "search_failed", retryable: true, waits: true },
      adapter_unavailable: { outcome: "adapter_unavailable", retryable: true, waits: true },
      search_failed: { outcome: "search_failed", retryable: true, waits: true },
      invalid_request: { outcome: "search_failed", retryable: false, waits: false },
      unsupported_action: { outcome: "search_failed", retryable: false, waits: false },
      locator_unknown: { outcome: "search_failed", retryable: false, waits: false },
      locator_expired: { outcome: "search_failed", retryable: false, waits: false },
    };
  const variants: Array<[string, ProviderErrorOptions]> = [
    ["no options", {}],
    ["retryable: false", { retryable: false }],
    ["retryable: true", { retryable: true }],
    ["retryAfterMs 2000", { retryAfterMs: 2_000 }],
    ["retryable: false and retryAfterMs 2000", { retryable: false, retryAfterMs: 2_000 }],
  ];
  for (const code of PROVIDER_ERROR_CODES) {
    for (const [name, options] of variants) {
      const row = TABLE[code];
      const expected: AttemptRecord = {
        outcome: row.outcome,
        code,
        // A provider's false always holds; its true never makes a code retryable.
        retryable: row.retryable && options.retryable !== false,
        retry_after_ms: row.waits ? options.retryAfterMs : undefined,
      };
      it(`ProviderError ${code} with ${name} is ${says(expected)}`, async () => {
        const adapter = throwing(() => new ProviderError(code, "it went wrong", options));
        assert.deepEqual(await recordOf(inProcessProvider(adapter)), expected, "in process");
        assert.deepEqual(await served(adapter), expected, "served by serveProvider");
      });
    }
  }

  it("any other error is search_failed and retryable, in process and over HTTP", async () => {
    const adapter = throwing(() => new Error("the index is gone"));
    const expected = failed("search_failed", true);
    assert.deepEqual(await recordOf(inProcessProvider(adapter)), expected);
    assert.deepEqual(await served(adapter), expected);
  });
});

describe("status matrix: a DNS failure is dns_failure in every transport", () => {
  const UNRESOLVABLE = "https://nonexistent.invalid/search";
  const expected = failed("dns_failure", true, undefined, "adapter_unavailable");

  it("a remote provider whose host does not resolve", async () => {
    assert.deepEqual(await recordOf(overHttp(UNRESOLVABLE)), expected);
  });

  it("a built-in whose third-party API's host does not resolve", async () => {
    assert.deepEqual(await recordOf(inProcessProvider(builtin(UNRESOLVABLE))), expected);
  });
});
