/**
 * The `stats` action (docs/protocol.md, "stats") through serveProvider and the HTTP client on
 * 127.0.0.1 and through the in-process client: the same statistics either way, a broken answer is
 * a protocol error and never statistics, a provider without it is unsupported, its body counts
 * against the search's byte budget, and only a provider that answers `stats` takes a search that
 * carries its score group's sums.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { corpusAdapter, type CorpusDocument } from "../providers/corpus/corpus-adapter.ts";
import { serveProvider } from "../src/kit/serve-provider.ts";
import { ByteBudget } from "../src/io/byte-budget.ts";
import { exchangeOverFetch } from "../src/io/provider-exchange.ts";
import {
  MAX_PROVIDER_REQUEST_BYTES,
  MAX_STATS_REQUEST_BYTES,
  MAX_STATS_TERMS,
} from "../src/protocol/limits.ts";
import type { SearchAdapter } from "../src/protocol/provider-contract.ts";
import { httpProvider } from "../src/transport/http-provider.ts";
import { bothWays } from "./support/both-ways.ts";
import { type Handler, startServer } from "./support/servers.ts";

const DOCS: CorpusDocument[] = [
  { title: "Deadlines", locator: "https://n.example/d", text: "Every call has a deadline." },
  { title: "Retries", locator: "https://n.example/r", text: "Retry calls with jitter." },
];

const statsCall = (budget = 1_000_000) => ({
  signal: AbortSignal.timeout(5_000),
  requestId: "stats-test",
  budget: new ByteBudget(budget),
  connectGate: null,
});

/** A client of a provider that answers every request with `body` (and `status`). */
async function answering(body: unknown, status = 200) {
  const handler: Handler = (_req, res) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };
  const server = await startServer(handler);
  const client = httpProvider({
    name: "p",
    scope: "s",
    endpoint: server.url,
    exchange: exchangeOverFetch(fetch),
    now: () => Date.now(),
  });
  return { client, close: () => server.close() };
}

const VALID = {
  schema_version: "tracefetch.provider-stats.v1",
  provider: "p",
  scope: "s",
  document_count: 2,
  total_length: 9,
  terms: [{ term: "deadlin", document_frequency: 1, collection_frequency: 3 }],
};

describe("the stats action", () => {
  it("answers the corpus's counts and the query's term frequencies, over HTTP and in process", async () => {
    await bothWays(corpusAdapter("notes", "notes", DOCS), async (client, how) => {
      const result = await client.stats({ query: "deadlines for calls" }, statsCall());
      assert.deepEqual(result, {
        kind: "answer",
        answer: {
          provider: "notes",
          scope: "notes",
          document_count: 2,
          total_length: 10,
          terms: [
            { term: "deadlin", document_frequency: 1, collection_frequency: 3 },
            { term: "call", document_frequency: 2, collection_frequency: 2 },
          ],
        },
      }, how);
    });
  });

  it("reads a valid answer, and a broken one as a protocol error, never as statistics", async () => {
    const broken = [
      [{ ...VALID, document_count: -1 }, "schema_violation"],
      [{ ...VALID, total_length: 1.5 }, "schema_violation"],
      [{ ...VALID, terms: Array(MAX_STATS_TERMS + 1).fill(VALID.terms[0]) }, "schema_violation"],
      [{ ...VALID, terms: [{ ...VALID.terms[0], extra: 1 }] }, "schema_violation"],
      [{ ...VALID, provider: "someone-else" }, "identity_mismatch"],
    ] as const;
    const ok = await answering(VALID);
    try {
      assert.equal((await ok.client.stats({ query: "q" }, statsCall())).kind, "answer");
    } finally {
      await ok.close();
    }
    for (const [body, code] of broken) {
      const p = await answering(body);
      try {
        const result = await p.client.stats({ query: "q" }, statsCall());
        assert.equal(result.kind, "failure");
        assert.equal(result.kind === "failure" && result.outcome, "provider_protocol_error");
        assert.equal(result.kind === "failure" && result.code, code);
      } finally {
        await p.close();
      }
    }
  });

  it("is unsupported, never an answer, for a provider without it (501, or in process)", async () => {
    const plain: SearchAdapter = {
      name: "p",
      scope: "s",
      search: () => Promise.resolve({ candidates: [] }),
    };
    await bothWays(plain, async (client, how) => {
      assert.equal((await client.stats({ query: "q" }, statsCall())).kind, "unsupported", how);
    });
  });

  it("counts its body against the search's byte budget", async () => {
    const p = await answering(VALID);
    try {
      const result = await p.client.stats({ query: "q" }, statsCall(10));
      assert.equal(result.kind === "failure" && result.code, "search_budget_exceeded");
    } finally {
      await p.close();
    }
  });
});

describe("serveProvider and collection_stats", () => {
  const search = (sums: unknown, padding = "") =>
    JSON.stringify({
      schema_version: "tracefetch.provider-request.v1",
      action: "search",
      query: "deadline",
      limit: 3,
      collection_stats: sums,
      ...(padding === "" ? {} : { padding }),
    });
  const post = (adapter: SearchAdapter, body: string) =>
    serveProvider(adapter).fetch(
      new Request("http://p/search", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      }),
    );
  const sums = {
    document_count: 20,
    total_length: 200,
    terms: [{ term: "deadlin", document_frequency: 3, collection_frequency: 4 }],
  };

  it("passes the sums to an adapter that answers stats, and refuses them for one that does not", async () => {
    const seen: unknown[] = [];
    const withStats: SearchAdapter = {
      name: "p",
      scope: "s",
      search: (request) => {
        seen.push(request.collection_stats);
        return Promise.resolve({ candidates: [] });
      },
      stats: () => Promise.resolve({ document_count: 0, total_length: 0, terms: [] }),
    };
    assert.equal((await post(withStats, search(sums))).status, 200);
    assert.deepEqual(seen, [sums]);
    const { stats: _stats, ...without } = withStats;
    const refused = await post(without, search(sums));
    assert.equal(refused.status, 400);
    assert.equal((await refused.json()).code, "invalid_request");
  });

  it("reads a search with sums past the plain request cap only for an adapter that answers stats", async () => {
    const big = search(sums, "x".repeat(MAX_PROVIDER_REQUEST_BYTES));
    assert.ok(big.length > MAX_PROVIDER_REQUEST_BYTES && big.length < MAX_STATS_REQUEST_BYTES);
    const withStats = corpusAdapter("p", "s", DOCS);
    // Read whole, then refused by the strict schema for the padding: not by the cap.
    const read = await post(withStats, big);
    assert.match((await read.json()).message, /padding/);
    const { stats: _stats, ...without } = withStats;
    const capped = await post(without as SearchAdapter, big);
    assert.match((await capped.json()).message, /at most 65536 bytes/);
  });
});
