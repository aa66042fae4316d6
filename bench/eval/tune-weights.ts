/**
 * `npm run eval -- --tune-weights`: the methods' fusion weights that give the best mean nDCG@10
 * on one collection. It asks the gateway once per query (equal weights, limit 100), then fuses in
 * process with the gateway's own fusion: the best method alone keeps weight 1, and each other
 * method's weight is tried at every value of a grid in turn, the best kept, until a pass over them
 * changes nothing (coordinate ascent: a full grid over five weights would be 32,768 fusions). The
 * winner is confirmed through the gateway. Tune on one collection and check on another: a weight
 * tuned and measured on the same queries flatters itself.
 */
import { fuse, type FusionInput } from "../../src/core/fusion.ts";
import { type Collection, documentIdOf, locatorOf, type Query } from "./collection.ts";
import { evaluate } from "../../src/cli/replay/metrics.ts";
import { runSearches } from "./run-searches.ts";
import { builtinSetups, type Method, METHODS, type Served } from "./setups.ts";

/** The weights tried for every method but the best, whose weight is 1. */
const GRID = [0, 0.1, 0.2, 0.3, 0.5, 0.7, 1, 1.5];
/** Passes over the methods at most; one that changes no weight ends the search. */
const MAX_PASSES = 4;
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
      attempt: {
        provider: method,
        scope: "eval",
        source_class: "candidate",
        sensitivity: "public" as const,
        candidates: (search.byProvider.get(method) ?? []).map((doc) => ({
          title: "",
          locator: locatorOf(collection.name, doc),
          snippet: "",
          published_at: null,
          metadata: {},
          truncated: [],
        })),
      },
    })),
  }));
  type Weights = Record<Method, number>;
  const score = (weights: Weights) => {
    const ranked = new Map<string, string[]>();
    for (const { id, inputs } of lists) {
      // A method at weight 0 is left out, as methods-tuned leaves it out of its manifest.
      const fused = fuse(
        inputs.filter((input) => weights[input.provider] > 0).map((input): FusionInput => ({
          index: input.index,
          attempt: input.attempt,
          evidence_state: "candidate-only",
          weight: weights[input.provider],
        })),
        LIMIT,
      );
      ranked.set(id, fused.map((m) => documentIdOf(m.locator)));
    }
    return evaluate(ranked, collection.qrels, { only: ranked.keys() }).mean.ndcg_10;
  };
  const alone = (method: Method) =>
    score(Object.fromEntries(METHODS.map((m) => [m, m === method ? 1 : 0])) as Weights);
  const lead = METHODS.map((m) => ({ m, ndcg: alone(m) })).sort((a, b) => b.ndcg - a.ndcg)[0];
  if (lead === undefined) throw new Error("no methods");
  let best = {
    weights: Object.fromEntries(METHODS.map((m) => [m, m === lead.m ? 1 : 0])) as Weights,
    ndcg: lead.ndcg,
  };
  for (let pass = 0, changed = true; changed && pass < MAX_PASSES; pass++) {
    changed = false;
    for (const method of METHODS.filter((m) => m !== lead.m)) {
      for (const weight of GRID) {
        const weights = { ...best.weights, [method]: weight };
        const ndcg = score(weights);
        if (ndcg > best.ndcg + 1e-12) {
          best = { weights, ndcg };
          changed = true;
        }
      }
    }
  }
  const [tuned] = builtinSetups(served, 1, best.weights).filter((s) => s.name === "methods-tuned");
  const check = await runSearches(tuned as NonNullable<typeof tuned>, queries, LIMIT);
  const ranked = new Map([...check.searches].map(([id, s]) => [id, s.merged]));
  const through = evaluate(ranked, collection.qrels, { only: ranked.keys() }).mean.ndcg_10;
  return [
    `${collection.name}: best nDCG@10 ${best.ndcg.toFixed(4)} in process, ${
      through.toFixed(4)
    } through the gateway (the best method alone, ${lead.m}: ${
      lead.ndcg.toFixed(4)
    }), with these weights:`,
    ...METHODS.filter((m) => best.weights[m] > 0).map((m) =>
      `  {"name": "${m}", "scope": "eval", "endpoint": "{${m}}", "weight": ${best.weights[m]}},`
    ),
    JSON.stringify(best.weights),
  ].join("\n");
}
