/**
 * Ranking-quality metrics over judged collections, computed the way trec_eval computes them so our
 * numbers can be set beside published ones.
 *
 * Boundary: pure functions over ids and judgments; reading files and running searches live in
 * their callers, `npm run eval` (bench/eval) and `tracefetch replay`, which share these figures.
 *
 * Invariants:
 * - A document is relevant when its relevance is > 0; relevance <= 0 never earns gain.
 * - A ranking counts each document once, at its first position; later repeats are dropped, as a
 *   run keyed by document id (trec_eval, pytrec_eval) would hold it.
 * - A judged query the run did not answer scores zero; it is never left out of a mean.
 */

/** Query id -> document id -> graded relevance (0 = judged not relevant). */
export type Qrels = Map<string, Map<string, number>>;

export type Metrics = {
  ndcg_10: number;
  map_100: number;
  recall_100: number;
  mrr: number;
  p_10: number;
};

export type MetricName = keyof Metrics;

export const METRIC_NAMES = [
  "ndcg_10",
  "map_100",
  "recall_100",
  "mrr",
  "p_10",
] as const satisfies readonly MetricName[];

export const METRIC_LABELS = {
  ndcg_10: "nDCG@10",
  map_100: "MAP@100",
  recall_100: "Recall@100",
  mrr: "MRR",
  p_10: "P@10",
} as const satisfies Record<MetricName, string>;

/** The cut-offs behind the metric names: the conventional BEIR/TREC depths. */
const NDCG_DEPTH = 10;
const MAP_DEPTH = 100;
const RECALL_DEPTH = 100;
const PRECISION_DEPTH = 10;

/** How much of a malformed line an error quotes: enough to find it, not a whole pasted file. */
const QUOTED_LINE_CHARS = 80;

const NUMBER = /^-?\d+(\.\d+)?$/;

/**
 * Parses `query-id<TAB>doc-id<TAB>relevance` lines. A first line whose relevance is not a number is
 * the header and is skipped; empty lines are ignored; anything else malformed throws, naming the
 * line number.
 */
export function parseQrels(text: string): Qrels {
  const qrels: Qrels = new Map();
  const lines = text.split("\n");
  lines.forEach((raw, index) => {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line === "") return;
    const fields = line.split("\t");
    if (index === 0 && fields.length === 3 && !NUMBER.test(fields[2] ?? "")) return;
    const [queryId, docId, relevance] = fields;
    if (
      fields.length !== 3 || !queryId || !docId || relevance === undefined ||
      !NUMBER.test(relevance)
    ) {
      const quoted = JSON.stringify(line.slice(0, QUOTED_LINE_CHARS));
      throw new Error(
        `qrels line ${index + 1}: expected "query-id<TAB>doc-id<TAB>relevance", got ${quoted}`,
      );
    }
    const judgments = qrels.get(queryId) ?? new Map<string, number>();
    if (judgments.has(docId)) {
      throw new Error(`qrels line ${index + 1}: query ${queryId} judges doc ${docId} twice`);
    }
    judgments.set(docId, Number(relevance));
    qrels.set(queryId, judgments);
  });
  return qrels;
}

/** The ranking with later repeats of a document removed. */
function unique(ranking: readonly string[]): string[] {
  return [...new Set(ranking)];
}

function gainOf(judgments: ReadonlyMap<string, number>, docId: string): number {
  const relevance = judgments.get(docId) ?? 0;
  return relevance > 0 ? relevance : 0;
}

/** The number of documents judged relevant (> 0) for the query. */
export function relevantCount(judgments: ReadonlyMap<string, number>): number {
  let count = 0;
  for (const relevance of judgments.values()) if (relevance > 0) count++;
  return count;
}

/** Discounted cumulative gain of gains listed in rank order (rank 1 first), cut at k. */
function dcg(gains: readonly number[], k: number): number {
  let sum = 0;
  gains.slice(0, k).forEach((gain, index) => {
    sum += gain / Math.log2(index + 2);
  });
  return sum;
}

/** trec_eval `ndcg_cut.k`: linear gain, log2(rank + 1) discount, ideal from all judgments. */
export function ndcgAt(
  ranking: readonly string[],
  judgments: ReadonlyMap<string, number>,
  k: number,
): number {
  const ideal = dcg(
    [...judgments.values()].filter((r) => r > 0).sort((a, b) => b - a),
    k,
  );
  if (ideal === 0) return 0;
  return dcg(unique(ranking).slice(0, k).map((id) => gainOf(judgments, id)), k) / ideal;
}

/** Average precision over the top k, divided by all relevant documents (trec_eval, not min(k, R)). */
export function averagePrecisionAt(
  ranking: readonly string[],
  judgments: ReadonlyMap<string, number>,
  k: number,
): number {
  const total = relevantCount(judgments);
  if (total === 0) return 0;
  let found = 0;
  let sum = 0;
  unique(ranking).slice(0, k).forEach((id, index) => {
    if (gainOf(judgments, id) === 0) return;
    found++;
    sum += found / (index + 1);
  });
  return sum / total;
}

export function recallAt(
  ranking: readonly string[],
  judgments: ReadonlyMap<string, number>,
  k: number,
): number {
  const total = relevantCount(judgments);
  if (total === 0) return 0;
  return relevantIn(unique(ranking).slice(0, k), judgments) / total;
}

/** Relevant documents in the top k over k, even when fewer than k were retrieved. */
export function precisionAt(
  ranking: readonly string[],
  judgments: ReadonlyMap<string, number>,
  k: number,
): number {
  return relevantIn(unique(ranking).slice(0, k), judgments) / k;
}

/** 1 / rank of the first relevant document over the whole ranking; 0 when there is none. */
export function reciprocalRank(
  ranking: readonly string[],
  judgments: ReadonlyMap<string, number>,
): number {
  const index = unique(ranking).findIndex((id) => gainOf(judgments, id) > 0);
  return index === -1 ? 0 : 1 / (index + 1);
}

function relevantIn(docIds: readonly string[], judgments: ReadonlyMap<string, number>): number {
  return docIds.filter((id) => gainOf(judgments, id) > 0).length;
}

export function queryMetrics(
  ranking: readonly string[],
  judgments: ReadonlyMap<string, number>,
): Metrics {
  return {
    ndcg_10: ndcgAt(ranking, judgments, NDCG_DEPTH),
    map_100: averagePrecisionAt(ranking, judgments, MAP_DEPTH),
    recall_100: recallAt(ranking, judgments, RECALL_DEPTH),
    mrr: reciprocalRank(ranking, judgments),
    p_10: precisionAt(ranking, judgments, PRECISION_DEPTH),
  };
}

/**
 * The document id a locator names, as judgments write it: its last path segment, decoded (the
 * judged collections of `npm run eval` serve `https://<collection>.eval.example/doc/<id>`).
 */
export function documentIdOf(locator: string): string {
  const path = locator.replace(/[?#].*$/, "").replace(/\/+$/, "");
  return decodeURIComponent(path.slice(path.lastIndexOf("/") + 1));
}

export type EvaluateOptions = {
  /** Evaluate only these query ids (a sampled subset); the rest of the qrels are not counted. */
  only?: Iterable<string>;
};

export type Evaluation = {
  /** Queries that entered the means: judged with at least one relevant document. */
  queries: number;
  /** Queries left out because none of their judgments is relevant. */
  skipped: number;
  /** Run queries with no judgments at all: usually an id mismatch in the harness. */
  unjudged: number;
  /** Means over `queries`; NaN when no query was evaluated. */
  mean: Metrics;
  /** One row per evaluated query, in qrels order. */
  per_query: Map<string, Metrics>;
};

export function evaluate(
  run: ReadonlyMap<string, readonly string[]>,
  qrels: Qrels,
  options: EvaluateOptions = {},
): Evaluation {
  const ids = options.only === undefined ? [...qrels.keys()] : unique([...options.only]);
  const per_query = new Map<string, Metrics>();
  let skipped = 0;
  for (const id of ids) {
    const judgments = qrels.get(id);
    if (judgments === undefined || relevantCount(judgments) === 0) {
      skipped++;
      continue;
    }
    per_query.set(id, queryMetrics(run.get(id) ?? [], judgments));
  }
  const unjudged = [...run.keys()].filter((id) => !qrels.has(id)).length;
  return { queries: per_query.size, skipped, unjudged, mean: meanOf(per_query), per_query };
}

function meanOf(rows: ReadonlyMap<string, Metrics>): Metrics {
  const mean = {} as Metrics;
  for (const name of METRIC_NAMES) {
    let sum = 0;
    for (const row of rows.values()) sum += row[name];
    mean[name] = rows.size === 0 ? Number.NaN : sum / rows.size;
  }
  return mean;
}

/**
 * One metric of two evaluations over the same queries, aligned by query id: the input of the
 * significance test and of the scatter chart. Throws when the query sets differ.
 */
export function paired(
  a: Evaluation,
  b: Evaluation,
  metric: MetricName,
): { query_ids: string[]; a: number[]; b: number[] } {
  const query_ids = [...a.per_query.keys()];
  if (query_ids.length !== b.per_query.size || query_ids.some((id) => !b.per_query.has(id))) {
    throw new Error("paired: the two evaluations cover different queries");
  }
  return {
    query_ids,
    a: query_ids.map((id) => (a.per_query.get(id) as Metrics)[metric]),
    b: query_ids.map((id) => (b.per_query.get(id) as Metrics)[metric]),
  };
}
