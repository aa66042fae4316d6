/**
 * Shards that agree, in workerd: the bundled worker (tests/workerd/miniflare.ts) asks the members
 * of a score group for their statistics, with the round's code loaded as the extra module it is
 * there, and sends each the sums, so three corpus shards on 127.0.0.1 rank as the whole corpus. The
 * same contract as tests/score-group-stats.test.ts on Node.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Miniflare } from "miniflare";
import { corpusAdapter } from "../../providers/corpus/corpus-adapter.ts";
import { serveProvider } from "../../src/kit/serve-provider.ts";
import { assertEnvelope, manifestOf } from "../support/gateway.ts";
import {
  fetchHandler,
  type Handler,
  sleep,
  startServer,
  type TestServer,
} from "../support/servers.ts";
import { startWorker } from "./miniflare.ts";
import { AERO_DOCUMENTS } from "../support/aero-documents.ts";

const DOCS = [...AERO_DOCUMENTS];
const QUERY = "supersonic flow shock waves";

/** How many times the test searches, 50 ms apart, before the gateway has described the shards. */
const WARM_UP_SEARCHES = 60;

type Body = { action?: string; collection_stats?: { document_count: number } };
const bodies = (s: TestServer): Body[] => s.requests.map((r) => JSON.parse(r.body) as Body);
const summed = (s: TestServer) =>
  bodies(s).flatMap((b) => b.action === "search" && b.collection_stats ? [b.collection_stats] : []);

function served(adapter: ReturnType<typeof corpusAdapter>): Handler {
  const app = serveProvider(adapter);
  return fetchHandler((request) => app.fetch(request));
}

describe("score group statistics in workerd", () => {
  const parts = [DOCS.slice(0, 3), DOCS.slice(3, 6), DOCS.slice(6)];
  const shards: TestServer[] = [];
  let mf: Miniflare;

  before(async () => {
    for (const [i, docs] of parts.entries()) {
      shards.push(await startServer(served(corpusAdapter(`s${i}`, "docs", docs))));
    }
    mf = await startWorker({
      TRACEFETCH_ALLOW_LOOPBACK: "1",
      TRACEFETCH_MANIFEST: JSON.stringify(manifestOf(shards.map((s, i) => ({
        name: `s${i}`,
        scope: "docs",
        endpoint: s.url,
        score_group: "idx",
      })))),
    }, { quiet: true });
  });
  after(async () => {
    await mf?.dispose();
    await Promise.all(shards.map((s) => s.close()));
  });

  const search = async () => {
    const res = await mf.dispatchFetch(
      `http://gateway.test/v1/search?q=${encodeURIComponent(QUERY)}&limit=10`,
    );
    return assertEnvelope(await res.json());
  };

  it("sends every member the group's sums, so three shards rank as the whole corpus", async () => {
    for (let i = 0; i < WARM_UP_SEARCHES && summed(shards[0]!).length === 0; i++) {
      await search();
      await sleep(50);
    }
    const body = await search();
    assert.equal(body.code, "ok");
    const whole = await corpusAdapter("c", "docs", DOCS).search(
      { query: QUERY, limit: 10 },
      new AbortController().signal,
    );
    assert.deepEqual(
      body.result.merged.map((m: { locator: string }) => m.locator),
      whole.candidates.map((c) => c.locator),
    );
    for (const shard of shards) assert.equal(summed(shard).at(-1)?.document_count, DOCS.length);
  });
});
