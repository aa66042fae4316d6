/**
 * Shards of one index (providers naming one `score_group`) merge by `metadata.score` before
 * fusion: RRF alone would interleave them round-robin whatever their scores say.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { fuse, type FusionInput } from "../src/core/fusion.ts";
import type { Candidate } from "../src/protocol/envelope-schema.ts";
import { answer, startServer, type TestServer } from "./support/servers.ts";
import { assertEnvelope, gateway } from "./support/gateway.ts";

const scored = (locator: string, score?: unknown): Candidate => ({
  title: locator,
  locator: `https://x.example/${locator}`,
  snippet: "",
  published_at: null,
  metadata: score === undefined ? {} : { score },
  truncated: [],
});

const shard = (
  index: number,
  candidates: Candidate[],
  group?: string,
  provider = `shard${index + 1}`,
): FusionInput => ({
  index,
  attempt: {
    provider,
    scope: "docs",
    source_class: "candidate",
    sensitivity: "public",
    candidates,
  },
  evidence_state: "candidate-only",
  weight: 1,
  ...(group === undefined ? {} : { score_group: group }),
});

const titles = (inputs: FusionInput[], limit = 10) => fuse(inputs, limit).map((m) => m.title);

describe("fuse: a score group", () => {
  const one = [scored("a1", 9), scored("a2", 8), scored("a3", 1)];
  const two = [scored("b1", 3), scored("b2", 2)];

  it("without a group, RRF interleaves two shards round-robin", () => {
    assert.deepEqual(titles([shard(0, one), shard(1, two)]), ["a1", "b1", "a2", "b2", "a3"]);
  });

  it("in one group, ranks the shards' pages by their scores", () => {
    assert.deepEqual(
      titles([shard(0, one, "idx"), shard(1, two, "idx")]),
      ["a1", "a2", "b1", "b2", "a3"],
    );
  });

  it("keeps each page's found_by and its rank in its own provider's list", () => {
    const merged = fuse([shard(0, one, "idx"), shard(1, two, "idx")], 10);
    const b1 = merged.find((m) => m.title === "b1");
    assert.deepEqual(b1?.found_by, ["shard2"]);
    assert.equal(b1?.best_rank, 1);
    assert.deepEqual(b1?.found_in, [{ candidate: 1, citation: 0 }]);
  });

  it("counts a page two shards both hold once, at its better score", () => {
    const merged = fuse([
      shard(0, [scored("dup", 5), scored("a", 4)], "idx"),
      shard(1, [scored("dup", 6), scored("b", 1)], "idx"),
    ], 10);
    assert.deepEqual(merged.map((m) => m.title), ["dup", "a", "b"]);
    const dup = merged[0];
    assert.deepEqual(dup?.found_by, ["shard1", "shard2"]);
    // Rank 1 in the merged group list, counted once: 1/(60+1), not twice.
    assert.equal(dup?.score, 1 / 61);
  });

  it("puts a candidate without a finite score after every scored one, in its provider's order", () => {
    assert.deepEqual(
      titles([
        shard(0, [scored("none1"), scored("text", "high"), scored("low", 0.1)], "idx"),
        shard(1, [scored("high", 2)], "idx"),
      ]),
      ["high", "low", "none1", "text"],
    );
  });

  it("fuses a group with a provider outside it by RRF over the group's merged list", () => {
    const merged = titles([
      shard(0, one, "idx"),
      shard(1, two, "idx"),
      shard(2, [scored("b2")], undefined, "other"),
    ]);
    // b2 is fourth in the group (1/64) and first elsewhere (1/61): the sum puts it on top.
    assert.equal(merged[0], "b2");
  });
});

describe("score groups through the gateway", () => {
  const servers: TestServer[] = [];
  after(async () => {
    for (const s of servers) await s.close();
  });

  it("merges shards named in one manifest score_group by score", async () => {
    const items = (prefix: string, scores: number[]) =>
      scores.map((score, i) => ({
        title: `${prefix}${i + 1}`,
        locator: `https://x.example/${prefix}${i + 1}`,
        metadata: { score },
      }));
    const a = await startServer(answer("shard1", "docs", items("a", [9, 8, 7])));
    const b = await startServer(answer("shard2", "docs", items("b", [3, 2, 1])));
    servers.push(a, b);
    const app = gateway([
      { name: "shard1", scope: "docs", endpoint: a.url, score_group: "idx" },
      { name: "shard2", scope: "docs", endpoint: b.url, score_group: "idx" },
    ]);
    const res = await app.request("/v1/search?q=anything&limit=6");
    const body = assertEnvelope(await res.json());
    assert.equal(res.status, 200);
    assert.deepEqual(
      body.result.merged.map((m: { title: string }) => m.title),
      ["a1", "a2", "a3", "b1", "b2", "b3"],
    );
  });
});
