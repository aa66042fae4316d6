/**
 * The extraction evaluation's measure (bench/eval/extraction/shingle-f1.ts), on texts whose scores
 * are known by hand, and `npm run eval -- --extraction` without its data: it says what it needs
 * and exits non-zero.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { pageCounts, pageF1, scores } from "../bench/eval/extraction/shingle-f1.ts";
import { halfOf } from "../bench/eval/extraction/split-pages.ts";

const close = (a: number, b: number) => assert.ok(Math.abs(a - b) < 1e-9, `${a} is not ${b}`);

describe("the token-shingle measure", () => {
  it("scores the same text 1 and a disjoint one 0", () => {
    const text = "the harbour master records the tide at each bell";
    assert.equal(pageF1(pageCounts(text, text)), 1);
    assert.equal(pageF1(pageCounts(text, "nothing in common with that line at all")), 0);
  });

  it("counts shingles of four tokens as a multiset, normalised per page", () => {
    // Truth: 6 tokens, shingles a-d, b-e, c-f; prediction adds one token: a-d, b-e, c-f, d-g.
    const counts = pageCounts("a b c d e f", "a b c d e f g");
    close(counts.tp, 3 / 4);
    close(counts.fp, 1 / 4);
    close(counts.fn, 0);
  });

  it("reads tokens as runs of letters, digits and underscores: punctuation goes, case stays", () => {
    assert.equal(pageF1(pageCounts("Café, crème; brûlée!", "Café crème brûlée")), 1);
    assert.notEqual(pageF1(pageCounts("Café crème brûlée", "café crème brûlée")), 1);
  });

  it("averages precision and recall over pages, then takes their harmonic mean", () => {
    const perfect = pageCounts("one two three four five", "one two three four five");
    const empty = pageCounts("one two three four five", "");
    const s = scores([perfect, empty]);
    // Precision counts only the page that predicted something; recall counts both.
    close(s.precision, 1);
    close(s.recall, 0.5);
    close(s.f1, (2 * 1 * 0.5) / 1.5);
  });

  it("splits the sorted pages by position, even to tuning and odd held out", () => {
    assert.deepEqual([0, 1, 2, 3].map(halfOf), ["tuning", "held-out", "tuning", "held-out"]);
  });
});

describe("npm run eval -- --extraction", () => {
  const run = (...args: string[]) =>
    spawnSync(
      process.execPath,
      ["--import", "tsx", "bench/eval/eval.ts", "--extraction", ...args],
      {
        cwd: new URL("..", import.meta.url),
        encoding: "utf8",
        timeout: 60_000,
      },
    );

  it("without --data says what it needs and exits 2", () => {
    const result = run();
    assert.equal(result.status, 2);
    assert.match(result.stderr, /--extraction needs --data DIR/);
    assert.match(result.stderr, /article-extraction-benchmark/);
  });

  it("scores a folder in the benchmark's layout: ours, Readability's, and ours through /v1/fetch", () => {
    const dir = mkdtempSync(join(tmpdir(), "extraction-"));
    try {
      const body = "The tide rose over the harbour wall at noon and stayed for an hour. ".repeat(4);
      const html = `<html><head><title>T</title></head><body><nav><a href="/">Home</a></nav>` +
        `<article><p>${body}</p></article></body></html>`;
      writeFileSync(
        join(dir, "ground-truth.json"),
        JSON.stringify({ a: { url: "https://x.test/a", articleBody: body } }),
      );
      mkdirSync(join(dir, "html"));
      writeFileSync(join(dir, "html", "a.html.gz"), gzipSync(html));
      const result = run("--data", dir, "--via-fetch", "--json", "--out", join(dir, "out"));
      assert.equal(result.status, 0, result.stderr);
      const report = JSON.parse(result.stdout) as {
        rows: Array<{ extractor: string; half: string; scores: { f1: number } }>;
      };
      const ours = report.rows.find((r) => r.extractor === "ours" && r.half === "tuning");
      assert.equal(ours?.scores.f1, 1);
      assert.ok(report.rows.some((r) => r.extractor === "readability"));
      const fetched = report.rows.find((r) =>
        r.extractor === "ours via /v1/fetch" && r.half === "tuning"
      );
      assert.equal(fetched?.scores.f1, 1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
