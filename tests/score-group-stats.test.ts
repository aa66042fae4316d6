/**
 * Shards that agree (docs/protocol.md, "Shards of one index: score_group"): before its search, each
 * member of a score group that declares `stats` is asked for its collection's statistics, and the
 * gateway sends the sums with the search to every member that answered, so the shards rank as one
 * index. A member without `stats` never sees the field; a member whose statistics fail or come
 * late is left out of the sums; a provider outside a group is never asked. Real providers on
 * 127.0.0.1, the corpus provider served by serveProvider.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { corpusAdapter } from "../providers/corpus/corpus-adapter.ts";
import { serveProvider } from "../src/kit/serve-provider.ts";
import type { SearchAdapter } from "../src/protocol/provider-contract.ts";
import {
  fetchHandler,
  type Handler,
  hold,
  sleep,
  startServer,
  type TestServer,
} from "./support/servers.ts";
import { gateway, type ProviderEntry, search } from "./support/gateway.ts";
import { AERO_DOCUMENTS } from "./support/aero-documents.ts";

const DOCS = [...AERO_DOCUMENTS];
const QUERY = "supersonic flow shock waves";

type Body = { action?: string; collection_stats?: { document_count: number } };
const bodies = (s: TestServer): Body[] => s.requests.map((r) => JSON.parse(r.body) as Body);
const asked = (s: TestServer, action: string) => bodies(s).filter((b) => b.action === action);
const summed = (s: TestServer) =>
  asked(s, "search").flatMap((b) => b.collection_stats ? [b.collection_stats] : []);

/** The adapter served over HTTP; `override` answers an action itself (a refusal, a hold). */
function served(adapter: SearchAdapter, override: Record<string, Handler> = {}): Handler {
  const app = serveProvider(adapter);
  const viaApp = fetchHandler((request) => app.fetch(request));
  return async (req, res, body) => {
    const action = (JSON.parse(body) as Body).action ?? "";
    return await (override[action] ?? viaApp)(req, res, body);
  };
}

/** A search-only provider written before describe: it refuses every other action with 400. */
function strictV1(adapter: SearchAdapter): Handler {
  const refuse: Handler = (_req, res) => {
    res.writeHead(400, { "content-type": "application/json" });
    res.end('{"schema_version":"tracefetch.provider-error.v1","code":"invalid_request"}');
  };
  return served(adapter, { describe: refuse, stats: refuse });
}

describe("score group statistics through the gateway", () => {
  const servers: TestServer[] = [];
  after(async () => {
    for (const s of servers) await s.close();
  });

  async function start(handler: Handler) {
    const server = await startServer(handler);
    servers.push(server);
    return server;
  }

  /** A gateway that describes its providers, warmed up until `member` was sent sums. */
  async function warmGateway(providers: ProviderEntry[], member: TestServer) {
    const app = gateway(providers, { settings: { describeProviders: true } });
    for (let i = 0; i < 100 && summed(member).length === 0; i++) {
      await search(app, { q: QUERY, limit: "10" });
      await sleep(10);
    }
    assert.ok(summed(member).length > 0, "the gateway never sent the sums");
    return app;
  }

  const shard = (name: string, url: string): ProviderEntry => ({
    name,
    scope: "docs",
    endpoint: url,
    score_group: "idx",
  });
  const thirds = [DOCS.slice(0, 3), DOCS.slice(3, 6), DOCS.slice(6)];

  it("sends every member the group's sums, so the shards rank and score as one index", async () => {
    const parts = await Promise.all(
      thirds.map((docs, i) => start(served(corpusAdapter(`s${i}`, "docs", docs)))),
    );
    const central = corpusAdapter("central", "docs", DOCS);
    const app = await warmGateway(parts.map((p, i) => shard(`s${i}`, p.url)), parts[0]!);
    const { body } = await search(app, { q: QUERY, limit: "10" });
    const whole = await central.search({ query: QUERY, limit: 10 }, new AbortController().signal);
    assert.deepEqual(
      body.result.merged.map((m: { locator: string }) => m.locator),
      whole.candidates.map((c) => c.locator),
    );
    const scoreOf = new Map<string, number>(
      body.result.candidates.flatMap((
        a: { candidates: Array<{ locator: string; metadata: { score: number } }> },
      ) => a.candidates.map((c) => [c.locator, c.metadata.score])),
    );
    for (const c of whole.candidates) assert.equal(scoreOf.get(c.locator), c.metadata?.score);
    for (const p of parts) {
      assert.ok(asked(p, "stats").length > 0);
      assert.equal(summed(p).at(-1)?.document_count, DOCS.length);
    }
  });

  it("never sends the field to a member without `stats`, and sums only those that answered", async () => {
    const [a, b] = await Promise.all([
      start(served(corpusAdapter("a", "docs", thirds[0]!))),
      start(served(corpusAdapter("b", "docs", thirds[1]!))),
    ]);
    const old = await start(strictV1(corpusAdapter("old", "docs", thirds[2]!)));
    const app = await warmGateway([shard("a", a.url), shard("b", b.url), shard("old", old.url)], a);
    await search(app, { q: QUERY });
    assert.deepEqual(asked(old, "stats"), []);
    assert.deepEqual(summed(old), []);
    assert.ok(asked(old, "search").length > 0);
    assert.equal(summed(a).at(-1)?.document_count, thirds[0]!.length + thirds[1]!.length);
  });

  it("leaves out a member whose statistics fail; it searches with its own, and the search is ok", async () => {
    const broken: Handler = (_req, res) => {
      res.writeHead(500, { "content-type": "application/json" });
      res.end('{"schema_version":"tracefetch.provider-error.v1","code":"search_failed"}');
    };
    const [a, b] = await Promise.all([
      start(served(corpusAdapter("a", "docs", thirds[0]!))),
      start(served(corpusAdapter("b", "docs", thirds[1]!))),
    ]);
    const failing = await start(served(corpusAdapter("f", "docs", thirds[2]!), { stats: broken }));
    const app = await warmGateway(
      [shard("a", a.url), shard("b", b.url), shard("f", failing.url)],
      a,
    );
    const { body } = await search(app, { q: QUERY });
    assert.equal(body.code, "ok");
    assert.ok(asked(failing, "stats").length > 0);
    assert.deepEqual(summed(failing), []);
    assert.equal(summed(b).at(-1)?.document_count, thirds[0]!.length + thirds[1]!.length);
  });

  it("does not wait past half a member's budget for statistics that never come", async () => {
    /** When `a` was asked to search, by the clock the test reads. */
    const searchedAt: number[] = [];
    const answerA = served(corpusAdapter("a", "docs", thirds[0]!));
    const a = await start(async (req, res, body) => {
      if ((JSON.parse(body) as Body).action === "search") searchedAt.push(performance.now());
      await answerA(req, res, body);
    });
    const b = await start(served(corpusAdapter("b", "docs", thirds[1]!)));
    const silent = await start(served(corpusAdapter("h", "docs", thirds[2]!), { stats: hold }));
    const app = await warmGateway([
      shard("a", a.url),
      shard("b", b.url),
      { ...shard("h", silent.url), timeout_seconds: 1 },
    ], a);
    const started = performance.now();
    const { body } = await search(app, { q: QUERY });
    assert.equal(body.code, "partial");
    // The others searched with the sums of the two that answered once half of the silent one's
    // 1 s budget had passed, not at its end.
    assert.equal(summed(a).at(-1)?.document_count, thirds[0]!.length + thirds[1]!.length);
    const waited = (searchedAt.at(-1) ?? Infinity) - started;
    assert.ok(waited >= 450 && waited < 900, `searched after ${waited} ms`);
    const silentAttempt = body.result.candidates.find((c: { provider: string }) =>
      c.provider === "h"
    );
    assert.equal(silentAttempt.outcome, "timeout");
  });

  it("asks no provider outside a score group for statistics", async () => {
    const [a, b] = await Promise.all([
      start(served(corpusAdapter("a", "docs", thirds[0]!))),
      start(served(corpusAdapter("b", "docs", thirds[1]!))),
    ]);
    const app = gateway([
      { name: "a", scope: "docs", endpoint: a.url },
      { name: "b", scope: "docs", endpoint: b.url },
    ], { settings: { describeProviders: true } });
    for (let i = 0; i < 5; i++) {
      await search(app, { q: QUERY });
      await sleep(20);
    }
    assert.ok(asked(a, "describe").length > 0, "the gateway described its providers");
    assert.deepEqual([...asked(a, "stats"), ...asked(b, "stats")], []);
    assert.deepEqual([...summed(a), ...summed(b)], []);
  });
});
