import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { fuse } from "../src/core/fusion.ts";
import type { FusedAttempt, FusionInput } from "../src/core/fusion.ts";
import { dedupKey } from "../src/core/dedup-key.ts";
import type { Candidate, MergedEntry } from "../src/protocol/envelope-schema.ts";
import { answer, sleep, startServer } from "./support/servers.ts";
import type { TestServer } from "./support/servers.ts";
import { assertEnvelope, gateway } from "./support/gateway.ts";
import { seeded, shuffle } from "./support/random.ts";

const cand = (locator: string, title = locator): Candidate => ({
  title,
  locator,
  snippet: `snippet of ${title}`,
  published_at: null,
  metadata: {},
  truncated: [],
});

/** One merged entry as [rank, title, score, found_by, found_in as "attempt:citation", best_rank]. */
const summary = (m: MergedEntry) => [
  m.rank,
  m.title,
  m.score,
  m.found_by.join(" "),
  m.found_in.map((f) => `${f.candidate}:${f.citation}`).join(" "),
  m.best_rank,
];

const input = (
  index: number,
  provider: string,
  weight: number,
  candidates: Candidate[],
  extra: Partial<FusedAttempt & Pick<FusionInput, "evidence_state">> = {},
): FusionInput => ({
  index,
  attempt: {
    provider,
    scope: `${provider}-scope`,
    source_class: `${provider}-class`,
    sensitivity: extra.sensitivity ?? "public",
    candidates,
  },
  evidence_state: extra.evidence_state ?? "candidate-only",
  weight,
});

/** Three providers with weights 1, 2 and 0.5 whose lists overlap. */
const example = (): FusionInput[] => [
  input(0, "alpha", 1, [
    cand("https://example.org/a", "A by alpha"),
    cand("https://example.org/b", "B by alpha"),
    cand("https://example.org/c", "C by alpha"),
  ]),
  input(1, "beta", 2, [
    cand("https://www.example.org/b/", "B by beta"),
    cand("https://example.org/d", "D by beta"),
    cand("http://EXAMPLE.org/a#top", "A by beta"),
  ]),
  // Attempt 2 failed, so gamma is attempt 3: found_in indexes result.candidates, not this array.
  input(3, "gamma", 0.5, [
    cand("https://example.org/c/", "C by gamma"),
    cand("https://example.org:443/a", "A by gamma"),
    cand("https://example.org/e", "E by gamma"),
  ]),
];

describe("fuse: weighted reciprocal rank fusion", () => {
  it("scores each page as the sum of weight/(60+rank) in plan order and ranks by score", () => {
    // Hand-computed, summed in plan order alpha, beta, gamma; found_in as "attempt:citation".
    assert.deepEqual(fuse(example(), 10).map(summary), [
      [1, "A by alpha", 1 / 61 + 2 / 63 + 0.5 / 62, "alpha beta gamma", "0:0 1:2 3:1", 1], // 0.0562
      [2, "B by beta", 1 / 62 + 2 / 61, "alpha beta", "0:1 1:0", 1], // 0.0489
      [3, "D by beta", 2 / 62, "beta", "1:1", 2], // 0.0323
      [4, "C by gamma", 1 / 63 + 0.5 / 61, "alpha gamma", "0:2 3:0", 1], // 0.0241
      [5, "E by gamma", 0.5 / 63, "gamma", "3:2", 3], // 0.0079
    ]);
  });

  it("shows the locator, title, snippet, scope and class of the best-ranked appearance", () => {
    const merged = fuse(example(), 10);
    // B and C are shown as listed by beta and gamma, where they rank 1, not as alpha lists them.
    assert.deepEqual(merged.map((m) => [m.locator, m.title, m.scope, m.source_class]), [
      ["https://example.org/a", "A by alpha", "alpha-scope", "alpha-class"],
      ["https://www.example.org/b/", "B by beta", "beta-scope", "beta-class"],
      ["https://example.org/d", "D by beta", "beta-scope", "beta-class"],
      ["https://example.org/c/", "C by gamma", "gamma-scope", "gamma-class"],
      ["https://example.org/e", "E by gamma", "gamma-scope", "gamma-class"],
    ]);
    assert.deepEqual(merged.map((m) => m.snippet), merged.map((m) => `snippet of ${m.title}`));
    assert.deepEqual(merged.map((m) => [m.published_at, m.sensitivity, m.evidence_state]), [
      ...Array(5).fill([null, "public", "candidate-only"]),
    ]);
  });

  it("shows the earlier appearance in plan order when two appearances share the best rank", () => {
    const merged = fuse([
      input(0, "first", 1, [cand("https://x.org/p", "first's")]),
      input(1, "second", 3, [cand("https://x.org/p/", "second's")]),
    ], 10);
    assert.equal(merged.length, 1);
    assert.equal(merged[0]?.title, "first's");
    assert.equal(merged[0]?.locator, "https://x.org/p");
    assert.equal(merged[0]?.score, 1 / 61 + 3 / 61);
  });

  it("counts a page listed twice by one provider once, at its best rank", () => {
    const merged = fuse([
      input(0, "a", 1, [
        cand("https://x.org/dup", "first listing"),
        cand("https://x.org/other"),
        cand("https://www.x.org/dup/", "second listing"),
      ]),
    ], 10);
    assert.equal(merged.length, 2);
    assert.deepEqual(merged[0], {
      ...merged[0],
      title: "first listing",
      found_by: ["a"],
      found_in: [{ candidate: 0, citation: 0 }],
      best_rank: 1,
      score: 1 / 61,
    });
    assert.equal(merged[1]?.score, 1 / 62);
  });

  it("breaks an equal score by the number of providers that found the page", () => {
    // 2/61 (one provider, weight 2) equals 1/61 + 1/61 (two providers) exactly in binary floating point.
    const merged = fuse([
      input(0, "heavy", 2, [cand("urn:solo")]),
      input(1, "a", 1, [cand("urn:shared")]),
      input(2, "b", 1, [cand("urn:shared")]),
    ], 10);
    assert.equal(merged[0]?.score, merged[1]?.score);
    assert.deepEqual(merged.map((m) => [m.locator, m.found_by]), [
      ["urn:shared", ["a", "b"]],
      ["urn:solo", ["heavy"]],
    ]);
  });

  it("breaks an equal score and provider count by the better best_rank", () => {
    // 2/(60+62) and 1/(60+1) are the same real number, hence the same double.
    const filler = Array.from({ length: 61 }, (_, i) => cand(`urn:filler-${i}`));
    const merged = fuse([
      input(0, "deep", 2, [...filler, cand("urn:deep")]),
      input(1, "top", 1, [cand("urn:top")]),
    ], 100);
    // The 61 fillers score higher; then top (best_rank 1) before deep (best_rank 62).
    assert.deepEqual(merged.slice(61).map((m) => [m.locator, m.best_rank, m.score]), [
      ["urn:top", 1, 1 / 61],
      ["urn:deep", 62, 1 / 61],
    ]);
  });

  it("breaks a full tie by plan order, whatever order the inputs are given in", () => {
    const inputs = [
      input(1, "later", 1, [cand("urn:later")]),
      input(0, "earlier", 1, [cand("urn:earlier")]),
    ];
    assert.deepEqual(fuse(inputs, 10).map((m) => [m.rank, m.locator]), [
      [1, "urn:earlier"],
      [2, "urn:later"],
    ]);
  });

  it("labels a merged entry with the most restrictive sensitivity of its appearances", () => {
    const merged = fuse([
      input(0, "open", 1, [cand("https://x.org/1"), cand("https://x.org/2")]),
      input(1, "account", 1, [cand("https://x.org/3"), cand("https://x.org/1")], {
        sensitivity: "account-visible",
      }),
      input(2, "vault", 1, [cand("https://x.org/9"), cand("https://x.org/2")], {
        sensitivity: "internal",
        evidence_state: "candidate-only-internal",
      }),
    ], 10);
    const byLocator = new Map(merged.map((m) => [m.locator, m]));
    const one = byLocator.get("https://x.org/1");
    const two = byLocator.get("https://x.org/2");
    assert.equal(one?.sensitivity, "account-visible");
    assert.equal(one?.scope, "open-scope", "the shown appearance is still the best-ranked one");
    assert.equal(two?.sensitivity, "internal");
    assert.equal(two?.evidence_state, "candidate-only-internal");
    assert.equal(byLocator.get("https://x.org/3")?.sensitivity, "account-visible");
  });

  it("caps merged at limit, keeping the best and numbering ranks from 1", () => {
    const merged = fuse(example(), 2);
    assert.deepEqual(merged.map((m) => [m.rank, m.title]), [[1, "A by alpha"], [2, "B by beta"]]);
    assert.deepEqual(fuse(example(), 1).map((m) => m.title), ["A by alpha"]);
  });

  it("gives identical output for 100 shuffles of the input array", () => {
    const expected = fuse(example(), 10);
    const random = seeded(0x5eed);
    for (let run = 0; run < 100; run++) {
      const shuffled = shuffle(example(), random);
      assert.deepEqual(fuse(shuffled, 10), expected, `shuffle ${run}`);
    }
  });
});

/** [rule, pairs that are the same page, pairs that are not]. */
const DEDUP_RULES: Array<[string, Array<[string, string]>, Array<[string, string]>]> = [
  ["lowercases the host", [["https://EXAMPLE.Org/a", "https://example.org/a"]], []],
  ["removes exactly one leading www.", [
    ["https://www.example.org/a", "https://example.org/a"],
    ["https://WWW.example.org/a", "https://example.org/a"],
    ["https://www.www.example.org/a", "https://WWW.www.example.org/a/"],
  ], [
    // www.www.example.org keeps one www., so it is neither of these pages.
    ["https://www.www.example.org/a", "https://www.example.org/a"],
    ["https://www.www.example.org/a", "https://example.org/a"],
    ["https://wwwexample.org/a", "https://example.org/a"],
  ]],
  ["drops the scheme's default port and keeps any other", [
    ["https://example.org:443/a", "https://example.org/a"],
    ["http://example.org:80/a", "https://example.org/a"],
  ], [
    ["https://example.org:8443/a", "https://example.org/a"],
    ["https://example.org:80/a", "https://example.org/a"],
    ["http://example.org:443/a", "http://example.org/a"],
  ]],
  ["drops the fragment", [
    ["https://example.org/a#intro", "https://example.org/a"],
    ["https://example.org/a/#intro", "https://example.org/a"],
  ], []],
  ["drops a trailing slash of the path", [
    ["https://example.org/a/", "https://example.org/a"],
    ["https://example.org/", "https://example.org"],
    ["https://example.org/a/?q=1", "https://example.org/a?q=1"],
  ], [["https://example.org/a/b", "https://example.org/a"]]],
  ["keeps the query", [["https://example.org/a?q=1#x", "https://www.example.org/a/?q=1"]], [
    ["https://example.org/a?q=1", "https://example.org/a?q=2"],
    ["https://example.org/a?q=1", "https://example.org/a"],
  ]],
  ["ignores the scheme", [
    ["http://example.org/a", "https://example.org/a"],
    ["HTTPS://example.org/a", "http://example.org/a"],
  ], []],
  ["compares other locators exactly", [["docs/a.md", "docs/a.md"], ["urn:x", "urn:x"]], [
    ["docs/a.md", "docs/a.md/"],
    ["docs/A.md", "docs/a.md"],
    ["urn:x", "URN:x"],
    ["urn:x", "urn:x#f"],
    ["file:///a", "file:///a/"],
    ["ftp://Example.org/a", "ftp://example.org/a"],
  ]],
  ["never merges an exact locator with a normalised web page", [], [
    ["//example.org/a", "https://example.org/a"],
    ["example.org/a", "https://example.org/a"],
  ]],
  ["falls back to exact comparison for an unparsable http-ish locator", [
    ["http://exa mple.org/a", "http://exa mple.org/a"],
  ], [
    ["http://exa mple.org/a", "http://exa mple.org/a/"],
    ["http://exa mple.org/a", "http://EXA mple.org/a"],
    ["http://[::1/a", "http://[::1/a/"],
  ]],
];

describe("dedupKey: when two locators are the same page", () => {
  for (const [rule, same, differ] of DEDUP_RULES) {
    it(rule, () => {
      for (const [a, b] of same) assert.equal(dedupKey(a), dedupKey(b), `${a} == ${b}`);
      for (const [a, b] of differ) assert.notEqual(dedupKey(a), dedupKey(b), `${a} != ${b}`);
    });
  }
});

describe("fusion through the gateway", () => {
  it("returns the same merged list for 100 searches whose providers answer in random order", async () => {
    const seed = Date.now() % 0x7fffffff;
    const random = seeded(seed);
    const names = ["p0", "p1", "p2", "p3", "p4"];
    const weights = [1, 2, 0.5, 1.5, 1];
    const lists = names.map((_, i) =>
      Array.from({ length: 6 }, (_, j) => ({
        title: `page ${(i + j * 2) % 9} via p${i}`,
        locator: j % 2 === 0
          ? `https://www.site.org/page/${(i + j * 2) % 9}/`
          : `https://site.org/page/${(i + j * 2) % 9}#p${i}`,
      }))
    );
    const completion = new Map<string, string[]>();
    const servers: TestServer[] = [];
    try {
      for (const [i, name] of names.entries()) {
        const respond = answer(name, name, lists[i] ?? []);
        servers.push(
          await startServer(async (req, res, body) => {
            await sleep(Math.floor(random() * 31));
            const id = String(req.headers["x-request-id"]);
            completion.set(id, [...(completion.get(id) ?? []), name]);
            await respond(req, res, body);
          }),
        );
      }
      const app = gateway(
        names.map((name, i) => ({ name, endpoint: servers[i]?.url, weight: weights[i] })),
      );
      const runOne = async (run: number) => {
        // A different query per run: identical searches in flight would share one fan-out.
        const res = await app.request(`/v1/search?q=pages+${run}&limit=20`, {
          headers: { "x-request-id": `run-${run}` },
        });
        const body = assertEnvelope(await res.json());
        assert.equal(body.code, "ok", `seed ${seed} run ${run}`);
        assert.deepEqual(
          body.result.candidates.map((c: { provider: string }) => c.provider),
          names,
        );
        return body.result.merged;
      };
      const started = Date.now();
      const first = await runOne(0);
      assert.equal(first.length, 9);
      // Five searches at a time: 99 more, about a second in all.
      for (let start = 1; start < 100; start += 5) {
        const runs = [0, 1, 2, 3, 4].map((k) => start + k).filter((r) => r < 100);
        const results = await Promise.all(runs.map(runOne));
        for (const [k, merged] of results.entries()) {
          assert.deepEqual(merged, first, `seed ${seed} run ${runs[k]}`);
        }
      }
      assert.ok(Date.now() - started < 10_000, "100 searches stay within a few seconds");
      const orders = new Set([...completion.values()].map((o) => o.join(",")));
      assert.equal(completion.size, 100);
      assert.ok(orders.size > 1, `providers answered in ${orders.size} distinct orders`);
    } finally {
      await Promise.all(servers.map((s) => s.close()));
    }
  });
});
