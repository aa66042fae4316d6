/**
 * The providers `npm run eval` serves for one collection, each a real provider built with the kit
 * and listening on 127.0.0.1, and the manifests of the named setups over them.
 */
import { corpusAdapter } from "../../providers/corpus/corpus-adapter.ts";
import { RM3 } from "../../providers/corpus/corpus-search.ts";
import { type SearchAdapter, serveProvider } from "../../src/kit/mod.ts";
import { listen, type Listening } from "../../src/kit/node/mod.ts";
import type { Collection } from "./collection.ts";
import { ngramAdapter } from "./ngram-adapter.ts";
import { tfidfAdapter } from "./tfidf-adapter.ts";

export type ManifestEntry = {
  name: string;
  scope: string;
  endpoint: string;
  weight?: number;
  score_group?: string;
};

export type Setup = { name: string; providers: ManifestEntry[] };

/**
 * The methods the `methods` setups fuse: the corpus provider as shipped (stemmed InExpB2), stemmed
 * BM25 with RM3 feedback, BM25 without stemming (the corpus provider before stemming), the corpus
 * provider over titles alone, character n-gram TF-IDF and word TF-IDF.
 */
export const METHODS = ["corpus", "rm3", "bm25", "title", "ngram", "tfidf"] as const;
export type Method = typeof METHODS[number];

/**
 * The skewed split's shares, contiguous ranges of the collection in file order: shards of one
 * index rarely hold equal parts, and a range differs from the rest in its vocabulary too.
 */
const SKEWED_SHARES = [0.6, 0.3, 0.1];

export type Served = {
  /** Endpoint of each served provider, by name: central, shard1..N, skewed1..3, the methods. */
  endpoints: Map<string, string>;
  /** Searches each provider received with its score group's statistics (`collection_stats`). */
  searchesWithSums(name: string): number;
  close(): Promise<void>;
};

/**
 * Serves every provider of the collection on 127.0.0.1. Each builds its index on its first request,
 * so a run of a few setups (the smoke test's central and federated) indexes only what it asks.
 */
export async function serveCollection(collection: Collection, shards: number): Promise<Served> {
  const docs = collection.documents;
  const adapters: Array<[string, (name: string) => SearchAdapter]> = [
    ["central", (name) => corpusAdapter(name, "eval", docs)],
    ["corpus", (name) => corpusAdapter(name, "eval", docs)],
    ["rm3", (name) => corpusAdapter(name, "eval", docs, { model: "bm25", feedback: RM3 })],
    ["bm25", (name) => corpusAdapter(name, "eval", docs, { model: "bm25", stemming: false })],
    ["title", (name) => corpusAdapter(name, "eval", docs.map((d) => ({ ...d, text: "" })))],
    ["ngram", (name) => ngramAdapter(name, "eval", docs)],
    ["tfidf", (name) => tfidfAdapter(name, "eval", docs)],
  ];
  for (let s = 0; s < shards; s++) {
    // Round-robin, as an operator splitting one index by document number would.
    const part = docs.filter((_, i) => i % shards === s);
    adapters.push([`shard${s + 1}`, (name) => corpusAdapter(name, "eval", part)]);
  }
  let from = 0;
  SKEWED_SHARES.forEach((share, s) => {
    const to = s === SKEWED_SHARES.length - 1
      ? docs.length
      : from + Math.round(share * docs.length);
    const part = docs.slice(from, to);
    adapters.push([`skewed${s + 1}`, (name) => corpusAdapter(name, "eval", part)]);
    from = to;
  });
  const withSums = new Map<string, number>();
  const listening: Listening[] = [];
  const endpoints = new Map<string, string>();
  for (const [name, make] of adapters) {
    let app: ReturnType<typeof serveProvider> | null = null;
    const served = await listen(async (request) => {
      if (request.method === "POST") await countSums(name, request.clone(), withSums);
      app ??= serveProvider(make(name));
      return await app.fetch(request);
    });
    listening.push(served);
    endpoints.set(name, `http://127.0.0.1:${served.port}/`);
  }
  return {
    endpoints,
    searchesWithSums: (name) => withSums.get(name) ?? 0,
    close: async () => {
      await Promise.all(listening.map((l) => l.close()));
    },
  };
}

/** Counts a search request that carries collection statistics. */
async function countSums(name: string, request: Request, counts: Map<string, number>) {
  const body = await request.json().catch(() => null) as Record<string, unknown> | null;
  if (body?.action === "search" && body.collection_stats !== undefined) {
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
}

function entry(served: Served, name: string, extra: Partial<ManifestEntry> = {}): ManifestEntry {
  const endpoint = served.endpoints.get(name);
  if (endpoint === undefined) throw new Error(`no provider "${name}" is served`);
  return { name, scope: "eval", endpoint, ...extra };
}

export function builtinSetups(
  served: Served,
  shards: number,
  tunedWeights: Partial<Record<Method, number>> | null,
): Setup[] {
  const shardNames = Array.from({ length: shards }, (_, s) => `shard${s + 1}`);
  const skewedNames = SKEWED_SHARES.map((_, s) => `skewed${s + 1}`);
  const setups: Setup[] = [
    { name: "central", providers: [entry(served, "central")] },
    {
      name: "federated",
      providers: shardNames.map((n) => entry(served, n, { score_group: "shards" })),
    },
    {
      name: "federated-skewed",
      providers: skewedNames.map((n) => entry(served, n, { score_group: "skewed" })),
    },
    { name: "federated-rrf", providers: shardNames.map((n) => entry(served, n)) },
    { name: "methods", providers: METHODS.map((m) => entry(served, m)) },
  ];
  if (tunedWeights !== null) {
    setups.push({
      name: "methods-tuned",
      // A method the tuning left at weight 0 is left out: RRF ignores it, and it costs a search.
      providers: METHODS.filter((m) => (tunedWeights[m] ?? 0) > 0).map((m) =>
        entry(served, m, { weight: tunedWeights[m] as number })
      ),
    });
  }
  return setups;
}

/**
 * A manifest of the user's: an endpoint written `{name}` (e.g. `{bm25}`, `{shard2}`) is the
 * served provider of that name; any other endpoint is used as written.
 */
export function userSetup(name: string, manifest: { providers?: unknown }, served: Served): Setup {
  if (!Array.isArray(manifest.providers)) throw new Error(`${name}: no "providers" list`);
  return {
    name,
    providers: manifest.providers.map((p: ManifestEntry) => {
      const placeholder = /^\{([a-z0-9-]+)\}$/.exec(p.endpoint ?? "");
      return placeholder ? { ...p, endpoint: entry(served, placeholder[1] as string).endpoint } : p;
    }),
  };
}
