/**
 * The evaluation's arithmetic against cases worked by hand (the working is in the comments), the
 * randomisation test's known answers, and the chart's markup.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  averagePrecisionAt,
  evaluate,
  type Metrics,
  ndcgAt,
  paired,
  parseQrels,
  precisionAt,
  queryMetrics,
  reciprocalRank,
} from "../src/cli/replay/metrics.ts";
import { pairedRandomisation } from "../bench/eval/significance.ts";
import { renderChart } from "../bench/eval/chart.ts";

const EPSILON = 1e-9;

function near(actual: number, expected: number, what = "value"): void {
  assert.ok(Math.abs(actual - expected) < EPSILON, `${what}: ${actual} != ${expected}`);
}

function nearMetrics(actual: Metrics | undefined, expected: Metrics): void {
  assert.ok(actual !== undefined, "metrics row missing");
  for (const [name, value] of Object.entries(expected)) {
    near(actual[name as keyof Metrics], value, name);
  }
}

const judged = (entries: Record<string, number>) => new Map(Object.entries(entries));
const ZERO: Metrics = { ndcg_10: 0, map_100: 0, recall_100: 0, mrr: 0, p_10: 0 };

// Graded: d1=3, d2=2, d3=0 retrieved at ranks 1..3; d4=1 relevant but never retrieved.
const GRADED = judged({ d1: 3, d2: 2, d3: 0, d4: 1 });
// DCG  = 3/log2(2) + 2/log2(3) + 0/log2(4)          = 3 + 1.2618595
// IDCG = 3/log2(2) + 2/log2(3) + 1/log2(4) (3,2,1)  = 3 + 1.2618595 + 0.5
const GRADED_NDCG = (3 + 2 / Math.log2(3)) / (3 + 2 / Math.log2(3) + 0.5); // = 0.894999...
const GRADED_METRICS: Metrics = {
  ndcg_10: GRADED_NDCG,
  map_100: 2 / 3, // R = 3 (d1, d2, d4): (1/1 + 2/2) / 3
  recall_100: 2 / 3, // 2 of 3 relevant retrieved
  mrr: 1, // d1 at rank 1
  p_10: 2 / 10, // 2 relevant in the top 10, over 10
};

// Binary: a, b, c relevant; x judged not relevant; y unjudged.
const BINARY = judged({ a: 1, b: 1, c: 1, x: 0 });

describe("per-query metrics", () => {
  it("graded gains: the ideal counts a relevant document the ranking missed", () => {
    nearMetrics(queryMetrics(["d1", "d2", "d3"], GRADED), GRADED_METRICS);
    assert.ok(Math.abs(GRADED_NDCG - 0.895) < 1e-4); // 4.2618595 / 4.7618595
  });

  it("binary gains over x, a, y, b", () => {
    // DCG = 0 + 1/log2(3) + 0 + 1/log2(5); IDCG = 1 + 1/log2(3) + 1/log2(4)
    const ndcg = (1 / Math.log2(3) + 1 / Math.log2(5)) / (1 + 1 / Math.log2(3) + 0.5);
    assert.ok(Math.abs(ndcg - 0.49819) < 1e-4);
    nearMetrics(queryMetrics(["x", "a", "y", "b"], BINARY), {
      ndcg_10: ndcg,
      map_100: 1 / 3, // (1/2 + 2/4) / 3
      recall_100: 2 / 3,
      mrr: 1 / 2, // first relevant (a) at rank 2
      p_10: 2 / 10,
    });
  });

  it("a repeated document counts once, at its first position", () => {
    // x, a, a, x, b is read as x, a, b: DCG = 1/log2(3) + 1/log2(4)
    const ndcg = (1 / Math.log2(3) + 0.5) / (1 + 1 / Math.log2(3) + 0.5);
    nearMetrics(queryMetrics(["x", "a", "a", "x", "b"], BINARY), {
      ndcg_10: ndcg,
      map_100: (1 / 2 + 2 / 3) / 3, // = 7/18: a at rank 2, b at rank 3
      recall_100: 2 / 3, // a counted once, not twice
      mrr: 1 / 2,
      p_10: 2 / 10,
    });
  });

  it("equally relevant documents in either order score the same, and perfectly", () => {
    const tied = judged({ p: 2, q: 2, r: 1 });
    near(ndcgAt(["p", "q", "r"], tied, 10), 1);
    near(ndcgAt(["q", "p", "r"], tied, 10), 1);
    // Putting r first is worse: DCG = 1 + 2/log2(3) + 2/2 vs IDCG = 2 + 2/log2(3) + 1/2
    near(ndcgAt(["r", "p", "q"], tied, 10), (2 + 2 / Math.log2(3)) / (2.5 + 2 / Math.log2(3)));
  });

  it("the ideal ranking sorts the judgments, whatever order the file listed them in", () => {
    // Ideal is high (3) then low (1): IDCG = 3/log2(2) + 1/log2(3); DCG of [high] = 3
    near(ndcgAt(["high"], judged({ low: 1, high: 3 }), 10), 3 / (3 + 1 / Math.log2(3)));
  });

  it("an empty ranking scores zero on every metric", () => {
    nearMetrics(queryMetrics([], GRADED), ZERO);
  });

  it("average precision divides by all relevant documents, even those beyond k", () => {
    // a at 1, b at 3, c at 4. AP@2 = (1/1) / 3; AP@100 = (1/1 + 2/3 + 3/4) / 3 = 29/36
    near(averagePrecisionAt(["a", "x", "b", "c"], BINARY, 2), 1 / 3);
    near(averagePrecisionAt(["a", "x", "b", "c"], BINARY, 100), 29 / 36);
    // 99 unjudged, then a at rank 100 and b at rank 101: only a is inside the cut.
    const deep = [...Array.from({ length: 99 }, (_, i) => `n${i}`), "a", "b"];
    const metrics = queryMetrics(deep, judged({ a: 1, b: 1 }));
    near(metrics.map_100, (1 / 100) / 2); // = 0.005
    near(metrics.recall_100, 1 / 2);
    near(metrics.mrr, 1 / 100);
    near(metrics.p_10, 0);
  });

  it("P@10 divides by 10 when fewer than 10 were retrieved", () => {
    near(precisionAt(["a"], BINARY, 10), 1 / 10);
    near(precisionAt(["a", "b", "c"], BINARY, 10), 3 / 10);
  });

  it("reciprocal rank looks past the metric cut-offs", () => {
    const late = [...Array.from({ length: 150 }, (_, i) => `n${i}`), "c"];
    near(reciprocalRank(late, BINARY), 1 / 151);
  });

  it("negative relevance earns no gain and is not relevant", () => {
    const judgments = judged({ a: 1, bad: -1 });
    nearMetrics(queryMetrics(["bad"], judgments), ZERO);
  });
});

describe("evaluate", () => {
  const qrels = parseQrels(
    "query-id\tdoc-id\trelevance\n" +
      "q1\td1\t3\nq1\td2\t2\nq1\td3\t0\nq1\td4\t1\n" +
      "q2\td1\t0\n" + // judged, but nothing relevant
      "q3\td9\t1\n", // judged, and the run never answers it
  );
  const run = new Map([["q1", ["d1", "d2", "d3"]], ["q2", ["d1"]], ["q9", ["d1"]]]);

  it("skips queries without relevant judgments and counts unanswered ones as zero", () => {
    const result = evaluate(run, qrels);
    assert.equal(result.queries, 2); // q1 and q3
    assert.equal(result.skipped, 1); // q2
    assert.equal(result.unjudged, 1); // q9
    assert.deepEqual([...result.per_query.keys()], ["q1", "q3"]);
    nearMetrics(result.per_query.get("q3"), ZERO);
    nearMetrics(result.mean, {
      ndcg_10: GRADED_NDCG / 2,
      map_100: 1 / 3, // (2/3 + 0) / 2
      recall_100: 1 / 3,
      mrr: 1 / 2,
      p_10: 1 / 10,
    });
  });

  it("an empty ranking is the same as a missing one", () => {
    const result = evaluate(new Map([["q1", []]]), qrels);
    nearMetrics(result.per_query.get("q1"), ZERO);
  });

  it("`only` restricts the evaluation to the given queries", () => {
    const result = evaluate(run, qrels, { only: ["q1"] });
    assert.equal(result.queries, 1);
    nearMetrics(result.mean, GRADED_METRICS);
  });

  it("no evaluated query gives NaN means, not zeros", () => {
    const result = evaluate(run, qrels, { only: ["q2"] });
    assert.equal(result.queries, 0);
    assert.ok(Number.isNaN(result.mean.ndcg_10));
  });

  it("paired aligns two evaluations by query id", () => {
    const better = evaluate(new Map([["q3", ["d9"]], ["q1", ["d1"]]]), qrels);
    const pairs = paired(evaluate(run, qrels), better, "mrr");
    assert.deepEqual(pairs, { query_ids: ["q1", "q3"], a: [1, 0], b: [1, 1] });
    assert.throws(() =>
      paired(evaluate(run, qrels), evaluate(run, qrels, { only: ["q1"] }), "mrr")
    );
  });
});

describe("parseQrels", () => {
  it("reads graded judgments, skipping the header, CRLF and the trailing newline", () => {
    const qrels = parseQrels("query-id\tdoc-id\trelevance\r\n1\t28\t2\r\n1\t35\t0\r\n2\t7\t1\n");
    assert.deepEqual(
      qrels,
      new Map([["1", new Map([["28", 2], ["35", 0]])], ["2", new Map([["7", 1]])]]),
    );
  });

  it("a file without a header loses no judgment", () => {
    assert.deepEqual(parseQrels("1\t28\t1"), new Map([["1", new Map([["28", 1]])]]));
  });

  it("a malformed line throws, naming its line number", () => {
    const header = "query-id\tdoc-id\trelevance\n";
    assert.throws(() => parseQrels(`${header}1\t28\t1\n1 35 1\n`), /line 3/);
    assert.throws(() => parseQrels(`${header}1\t28\tyes\n`), /line 2/);
    assert.throws(() => parseQrels(`${header}1\t\t1\n`), /line 2/);
    assert.throws(() => parseQrels(`${header}1\t28\t1\n1\t28\t2\n`), /line 3.*twice/);
  });
});

describe("pairedRandomisation", () => {
  const base = Array.from({ length: 30 }, (_, i) => 0.3 + ((i * 7) % 11) / 30);

  it("identical inputs give p = 1 and no difference", () => {
    assert.deepEqual(pairedRandomisation(base, base), { mean_difference: 0, p_value: 1 });
  });

  it("a large consistent difference over 30 queries is significant", () => {
    const better = base.map((v, i) => v + 0.1 + (i % 3) * 0.01);
    const result = pairedRandomisation(better, base);
    near(result.mean_difference, 0.1 + 0.01 * (10 * 0 + 10 * 1 + 10 * 2) / 30);
    assert.ok(result.p_value < 0.01, `p = ${result.p_value}`);
    assert.ok(pairedRandomisation(base, better).mean_difference < 0);
  });

  it("two equal differences are as extreme as the observed half the time (two-sided)", () => {
    // Signs ++ and -- reach |mean| = 1, +- and -+ give 0: p -> 2/4.
    const { p_value } = pairedRandomisation([1, 1], [0, 0]);
    assert.ok(Math.abs(p_value - 0.5) < 0.03, `p = ${p_value}`);
  });

  it("the same seed gives the same p", () => {
    const noisy = base.map((v, i) => v + (i % 2 === 0 ? 0.05 : -0.04));
    const first = pairedRandomisation(noisy, base, { seed: 42, permutations: 2_000 });
    const again = pairedRandomisation(noisy, base, { seed: 42, permutations: 2_000 });
    assert.equal(first.p_value, again.p_value);
    assert.ok(first.p_value > 0.01 && first.p_value < 1, `p = ${first.p_value}`);
  });

  it("unequal lengths throw", () => {
    assert.throws(() => pairedRandomisation([1, 2], [1]), RangeError);
  });
});

describe("renderChart", () => {
  const mean: Metrics = { ndcg_10: 0.4, map_100: 0.3, recall_100: 0.7, mrr: 0.6, p_10: 0.25 };
  const points = [
    { query_id: "1", x: 0.2, y: 0.3 },
    { query_id: "2", x: 0.9, y: 0.1 },
    { query_id: "3", x: 0.5, y: 0.5 },
  ];
  const svg = renderChart({
    title: "cranfield",
    setups: [
      { label: "central", mean },
      { label: "federated <&> \"q\" 'x'", mean: { ...mean, ndcg_10: 0.35 } },
      { label: "methods: bm25", mean },
    ],
    scatter: { x_label: "central", y_label: "federated <&>", points },
  });

  it("is one svg element", () => {
    assert.ok(svg.startsWith("<svg"));
    assert.ok(svg.endsWith("</svg>"));
    assert.equal(svg.match(/<svg/g)?.length, 1);
  });

  it("names every setup, escaped", () => {
    assert.ok(svg.includes(">central<"));
    assert.ok(svg.includes(">methods: bm25<"));
    assert.ok(svg.includes("federated &lt;&amp;&gt; &quot;q&quot; &#39;x&#39;"));
    assert.ok(!svg.includes("<&>"));
    assert.ok(svg.includes("federated &lt;&amp;&gt; nDCG@10"));
  });

  it("draws one circle per scatter point, and none without a scatter", () => {
    assert.equal(svg.match(/<circle/g)?.length, points.length);
    const bare = renderChart({ title: "t", setups: [{ label: "central", mean }] });
    assert.equal(bare.match(/<circle/g), null);
    assert.ok(bare.endsWith("</svg>"));
  });
});
