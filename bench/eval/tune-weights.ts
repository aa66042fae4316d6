/**
 * `npm run eval -- --tune-weights`: the methods' fusion weights that give the best mean nDCG@10
 * on one collection. It asks the gateway once per query (equal weights, limit 100), then fuses
 * each weight combination in process with the gateway's own fusion, and confirms the winner
 * through the gateway. Tune on one collection and check on another: a weight tuned and measured
 * on the same queries flatters itself.
 */
import { fuse, type FusionInput } from "../../src/core/fusion.ts";
import { type Collection, documentIdOf, locatorOf, type Query } from "./collection.ts";
import { evaluate } from "../../src/cli/replay/metrics.ts";
import { runSearches } from "./run-searches.ts";
import { builtinSetups, type Method, METHODS, type Served } from "./setups.ts";

/** The weights tried for TF-IDF and title-only BM25, BM25's being 1. */
const GRID = [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1, 1.25, 1.5, 2];
const LIMIT = 100;

export async function tuneWeights(
  served: Served,
  queries: readonly Query[],
  collection: Collection,
): Promise<string> {
  const [methods] = builtinSetups(served, 1, null).filter((s) => s.name === "methods");
  if (methods === undefined) throw new Error("no methods setup");
  const run = await runSearches(methods, queries, LIMIT);
  const lists = [...run.searches].map(([id, search]) => ({
    id,
    inputs: METHODS.map((method, index) => ({
      index,
      provider: method,
      candidates: (search.byProvider.get(method) ?? []).map((doc) => ({
        title: "",
        locator: locatorOf(collection.name, doc),
        snippet: "",
        published_at: null,
        metadata: {},
        truncated: [],
      })),
    })),
  }));
  const score = (weights: Record<Method, number>) => {
    const ranked = new Map<string, string[]>();
    for (const { id, inputs } of lists) {
      const fused = fuse(
        inputs.map((input): FusionInput => ({
          ...input,
          scope: "eval",
          source_class: "candidate",
          sensitivity: "public",
          evidence_state: "candidate-only",
          weight: weights[input.provider],
        })),
        LIMIT,
      );
      ranked.set(id, fused.map((m) => documentIdOf(m.locator)));
    }
    return evaluate(ranked, collection.qrels, { only: ranked.keys() }).mean.ndcg_10;
  };
  let best = { weights: { bm25: 1, tfidf: 1, title: 1 }, ndcg: -1 };
  for (const tfidf of GRID) {
    for (const title of GRID) {
      const weights = { bm25: 1, tfidf, title };
      const ndcg = score(weights);
      if (ndcg > best.ndcg + 1e-12) best = { weights, ndcg };
    }
  }
  const [tuned] = builtinSetups(served, 1, best.weights).filter((s) => s.name === "methods-tuned");
  const check = await runSearches(tuned as NonNullable<typeof tuned>, queries, LIMIT);
  const ranked = new Map([...check.searches].map(([id, s]) => [id, s.merged]));
  const through = evaluate(ranked, collection.qrels, { only: ranked.keys() }).mean.ndcg_10;
  return [
    `${collection.name}: best nDCG@10 ${best.ndcg.toFixed(4)} in process, ${
      through.toFixed(4)
    } through the gateway, with these weights:`,
    ...METHODS.map((m) =>
      `  {"name": "${m}", "scope": "eval", "endpoint": "{${m}}", "weight": ${best.weights[m]}},`
    ),
    JSON.stringify(best.weights),
  ].join("\n");
}
