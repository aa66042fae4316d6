/**
 * The providers `npm run eval` serves for one collection, each a real provider built with the kit
 * and listening on 127.0.0.1, and the manifests of the named setups over them.
 */
import { corpusAdapter, type CorpusDocument } from "../../providers/corpus/corpus-adapter.ts";
import { type SearchAdapter, serveProvider } from "../../src/kit/mod.ts";
import { listen, type Listening } from "../../src/kit/node/mod.ts";
import type { Collection } from "./collection.ts";
import { tfidfAdapter } from "./tfidf-adapter.ts";

export type ManifestEntry = {
  name: string;
  scope: string;
  endpoint: string;
  weight?: number;
  score_group?: string;
};

export type Setup = { name: string; providers: ManifestEntry[] };

/** The methods the `methods` setups fuse: BM25, TF-IDF cosine and BM25 over titles alone. */
export const METHODS = ["bm25", "tfidf", "title"] as const;
export type Method = typeof METHODS[number];

export type Served = {
  /** Endpoint of each served provider, by name: central, shard1..N, bm25, tfidf, title. */
  endpoints: Map<string, string>;
  close(): Promise<void>;
};

export async function serveCollection(collection: Collection, shards: number): Promise<Served> {
  const docs = collection.documents;
  const adapters: SearchAdapter[] = [
    corpusAdapter("central", "eval", docs),
    corpusAdapter("bm25", "eval", docs),
    tfidfAdapter("tfidf", "eval", docs),
    corpusAdapter("title", "eval", docs.map((d): CorpusDocument => ({ ...d, text: "" }))),
  ];
  for (let s = 0; s < shards; s++) {
    // Round-robin, as an operator splitting one index by document number would.
    adapters.push(corpusAdapter(`shard${s + 1}`, "eval", docs.filter((_, i) => i % shards === s)));
  }
  const listening: Listening[] = [];
  const endpoints = new Map<string, string>();
  for (const adapter of adapters) {
    const served = await listen(serveProvider(adapter).fetch);
    listening.push(served);
    endpoints.set(adapter.name, `http://127.0.0.1:${served.port}/`);
  }
  return {
    endpoints,
    close: async () => {
      await Promise.all(listening.map((l) => l.close()));
    },
  };
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
  const setups: Setup[] = [
    { name: "central", providers: [entry(served, "central")] },
    {
      name: "federated",
      providers: shardNames.map((n) => entry(served, n, { score_group: "shards" })),
    },
    { name: "federated-rrf", providers: shardNames.map((n) => entry(served, n)) },
    { name: "methods", providers: METHODS.map((m) => entry(served, m)) },
  ];
  if (tunedWeights !== null) {
    setups.push({
      name: "methods-tuned",
      providers: METHODS.map((m) => entry(served, m, { weight: tunedWeights[m] ?? 1 })),
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
