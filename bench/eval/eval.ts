/**
 * `npm run eval [FOLDER...] [options]`: ranking quality of the gateway on judged collections
 * (docs/quality.md). Every search goes through a real gateway over HTTP to real providers built
 * with the kit; the figures are nDCG@10, MAP@100, Recall@100, MRR and P@10.
 *
 *   --setups a,b       central, federated, federated-skewed, federated-rrf, methods, methods-tuned
 *                      (default: all)
 *   --shards N         shards of the federated setups (default 3)
 *   --limits 10,100    the search `limit`s to run (default 10 and 100)
 *   --manifest FILE    also run this manifest (endpoints may be `{central}`, `{shard1}`, `{bm25}`...)
 *   --queries N        only the first N judged queries (a smoke run)
 *   --tune-weights     search the methods' weights on the first collection; print manifest lines
 *   --json             print one JSON object instead of tables
 *   --out DIR          where the SVG charts go (default eval-out/, ignored by git)
 *   --extraction       instead: the page extractor on the article extraction benchmark, read
 *                      from --data DIR (bench/eval/extraction/SOURCE.md); F1, precision and
 *                      recall of ours and of Readability, on the tuning and held-out halves;
 *                      --via-fetch adds ours through POST /v1/fetch (format text)
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { renderChart } from "./chart.ts";
import { type Collection, loadCollection } from "./collection.ts";
import { evaluate, type Evaluation, paired, relevantCount } from "../../src/cli/replay/metrics.ts";
import { formatTables, type Row } from "./eval-report.ts";
import { runSearches, type SetupRun } from "./run-searches.ts";
import {
  builtinSetups,
  type Method,
  METHODS,
  serveCollection,
  type Served,
  type Setup,
  userSetup,
} from "./setups.ts";
import { pairedRandomisation } from "./significance.ts";
import { tuneWeights } from "./tune-weights.ts";

const DEFAULT_FOLDERS = ["bench/eval/cranfield", "bench/eval/cisi"];
const WEIGHTS_FILE = new URL("./method-weights.json", import.meta.url);

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    setups: { type: "string" },
    shards: { type: "string", default: "3" },
    limits: { type: "string", default: "10,100" },
    manifest: { type: "string", multiple: true, default: [] },
    queries: { type: "string" },
    "tune-weights": { type: "boolean", default: false },
    json: { type: "boolean", default: false },
    out: { type: "string", default: "eval-out" },
    extraction: { type: "boolean", default: false },
    data: { type: "string" },
    "via-fetch": { type: "boolean", default: false },
  },
});

function positiveInteger(text: string, flag: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} must be a positive integer`);
  return n;
}

const shards = positiveInteger(values.shards, "--shards");
const limits = values.limits.split(",").map((l) => positiveInteger(l, "--limits"));
const folders = positionals.length > 0 ? positionals : DEFAULT_FOLDERS;

/** The judged queries, in file order, cut to --queries when given. */
function judgedQueries(collection: Collection) {
  const judged = collection.queries.filter((q) =>
    relevantCount(collection.qrels.get(q.id) ?? new Map()) > 0
  );
  return values.queries ? judged.slice(0, positiveInteger(values.queries, "--queries")) : judged;
}

function evaluationOf(run: SetupRun, collection: Collection, pick?: string): Evaluation {
  const ranked = new Map<string, string[]>();
  for (const [id, search] of run.searches) {
    ranked.set(id, pick === undefined ? search.merged : search.byProvider.get(pick) ?? []);
  }
  return evaluate(ranked, collection.qrels, { only: run.searches.keys() });
}

async function readWeights(): Promise<Partial<Record<Method, number>> | null> {
  try {
    return JSON.parse(await readFile(WEIGHTS_FILE, "utf8"));
  } catch {
    return null;
  }
}

/** Two-sided p of a paired randomisation test on per-query nDCG@10. */
function pValue(a: Evaluation, b: Evaluation): number {
  const pair = paired(a, b, "ndcg_10");
  return pairedRandomisation(pair.a, pair.b).p_value;
}

async function evaluateCollection(folder: string) {
  const collection = await loadCollection(folder);
  const queries = judgedQueries(collection);
  const served = await serveCollection(collection, shards);
  try {
    if (values["tune-weights"]) {
      return { collection, tuned: await tuneWeights(served, queries, collection) };
    }
    const manifests = await Promise.all(
      values.manifest.map(async (file) =>
        userSetup(file, JSON.parse(await readFile(file, "utf8")), served)
      ),
    );
    const wanted = values.setups?.split(",");
    const setups = [...builtinSetups(served, shards, await readWeights()), ...manifests]
      .filter((s) =>
        wanted === undefined || wanted.includes(s.name) || manifests.some((m) => m === s)
      );
    const rows: Row[] = [];
    for (const limit of limits) {
      const byName = new Map<string, Evaluation>();
      for (const setup of setups) {
        const sums = sumsWatch(setup, served);
        const run = await runSearches(setup, queries, limit, sums.ready);
        const evaluation = evaluationOf(run, collection);
        byName.set(setup.name, evaluation);
        rows.push({
          collection: collection.name,
          limit,
          setup: setup.name,
          evaluation,
          failed: run.failed,
          shortened: run.shortened,
          ...sums.report(queries.length),
        });
        if (setup.name === "methods") {
          for (const method of METHODS) {
            const single = evaluationOf(run, collection, method);
            byName.set(`method:${method}`, single);
            rows.push({
              collection: collection.name,
              limit,
              setup: `method:${method}`,
              evaluation: single,
              failed: 0,
              shortened: run.shortened,
            });
          }
        }
      }
      compare(rows, byName, limit, setups);
      if (!values.json) {
        await chart(
          collection.name,
          limit,
          rows.filter((r) => r.limit === limit),
          byName,
        );
      }
    }
    return { collection, rows };
  } finally {
    await served.close();
  }
}

/**
 * Whether a setup's score group members get their group's statistics: `ready` once each of them
 * was sent the sums (the gateway has described them), and what the judged searches carried.
 */
function sumsWatch(setup: Setup, served: Served) {
  const members = setup.providers.filter((p) =>
    p.score_group !== undefined && served.endpoints.get(p.name) === p.endpoint
  ).map((p) => p.name);
  const before = new Map(members.map((m) => [m, served.searchesWithSums(m)]));
  let warm = new Map(before);
  return {
    ready: () => {
      const done = members.every((m) => served.searchesWithSums(m) > (before.get(m) ?? 0));
      if (done) warm = new Map(members.map((m) => [m, served.searchesWithSums(m)]));
      return done;
    },
    report: (queries: number) =>
      members.length === 0 ? {} : {
        sums: {
          sent: members.reduce((n, m) => n + served.searchesWithSums(m) - (warm.get(m) ?? 0), 0),
          searches: members.length * queries,
        },
      },
  };
}

/**
 * Each row's nDCG@10 (and MRR) against its reference: central for the shards, and for a fusion of
 * methods its best member, the one method of those it fuses with the best nDCG@10 alone.
 */
function compare(
  rows: Row[],
  byName: Map<string, Evaluation>,
  limit: number,
  setups: readonly Setup[],
) {
  const central = byName.get("central");
  const bestMember = (setup: string) => {
    const members = setups.find((s) => s.name === setup)?.providers.map((p) => p.name) ?? [];
    return METHODS.filter((m) => members.includes(m))
      .flatMap((m) => byName.get(`method:${m}`) ?? [])
      .sort((a, b) => b.mean.ndcg_10 - a.mean.ndcg_10)[0];
  };
  for (const row of rows.filter((r) => r.limit === limit)) {
    const reference = row.setup.startsWith("federated") || values.manifest.includes(row.setup)
      ? central
      : row.setup.startsWith("methods")
      ? bestMember(row.setup)
      : undefined;
    if (reference === undefined || reference === row.evaluation) continue;
    row.versus = {
      reference: reference === central ? "central" : "best member",
      ratio: row.evaluation.mean.ndcg_10 / reference.mean.ndcg_10,
      mrr_ratio: row.evaluation.mean.mrr / reference.mean.mrr,
      p_value: pValue(row.evaluation, reference),
    };
  }
}

async function chart(name: string, limit: number, rows: Row[], byName: Map<string, Evaluation>) {
  const central = byName.get("central");
  const federated = byName.get("federated");
  const pair = central && federated ? paired(central, federated, "ndcg_10") : undefined;
  const svg = renderChart({
    title: `${name}, limit ${limit}`,
    setups: rows.map((r) => ({ label: r.setup, mean: r.evaluation.mean })),
    ...(pair
      ? {
        scatter: {
          x_label: "central nDCG@10",
          y_label: "federated nDCG@10",
          points: pair.query_ids.map((query_id, i) => ({
            query_id,
            x: pair.a[i] ?? 0,
            y: pair.b[i] ?? 0,
          })),
        },
      }
      : {}),
  });
  await mkdir(values.out, { recursive: true });
  const file = join(values.out, `${name}-limit-${limit}.svg`);
  await writeFile(file, svg);
  console.error(`wrote ${file}`);
}

const results = [];
if (values.extraction) {
  const { runExtractionEval } = await import("./extraction/extraction-eval.ts");
  process.exitCode = await runExtractionEval(values.data, {
    out: values.out,
    json: values.json,
    viaFetch: values["via-fetch"],
  });
} else {
  for (const folder of folders) results.push(await evaluateCollection(folder));
}
if (values.extraction) {
  // reported above
} else if (values["tune-weights"]) {
  for (const r of results) if ("tuned" in r && r.tuned) console.log(r.tuned);
} else {
  const rows = results.flatMap((r) => ("rows" in r && r.rows) ? r.rows : []);
  console.log(values.json ? JSON.stringify(formatJson(rows), null, 2) : formatTables(rows));
}

function formatJson(rows: Row[]) {
  return {
    rows: rows.map((r) => ({
      collection: r.collection,
      limit: r.limit,
      setup: r.setup,
      queries: r.evaluation.queries,
      failed_searches: r.failed,
      shortened_queries: r.shortened,
      ...(r.sums ? { searches_with_sums: r.sums } : {}),
      mean: r.evaluation.mean,
      ...(r.versus ? { versus: r.versus } : {}),
    })),
  };
}
