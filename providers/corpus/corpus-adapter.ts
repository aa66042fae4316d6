/**
 * A full-text search adapter over a list of documents: BM25 through MiniSearch, with the terms of
 * corpus-terms.ts (stopwords out, identifiers whole, prefix matching only for a short query's last
 * term). The example corpus providers serve it over HTTP; the composition roots
 * (src/runtime, src/cli, and scripts/build-worker.ts for the Worker) build the `workspace` built-in
 * from it over docs/: one contract, two transports. It needs only Web APIs, so the Worker carries
 * it too.
 */
import MiniSearch from "minisearch";
import { type HealthAnswer, ProviderError, type SearchAdapter } from "../../src/kit/mod.ts";
import { expandsByPrefix, processTerm, tokenize } from "./corpus-terms.ts";

export type CorpusDocument = {
  title: string;
  locator: string;
  text: string;
  published_at?: string;
};

/** How much text around the first match a snippet shows, in characters. */
const SNIPPET_CHARS = 280;

/**
 * Plain BM25 (Robertson's k1 1.2 and b 0.75). MiniSearch's default adds BM25+'s floor d = 0.5 to
 * every matched term, which favours long documents that match many weak terms.
 */
const BM25 = { k: 1.2, b: 0.75, d: 0 };

/**
 * The title is indexed twice: inside `all` (title and text as one field, so a term's frequency
 * and the document's length are counted once) and on its own at this weight, so a title word
 * counts 1.3 times. 0.3 was best on Cranfield (docs/quality.md); CISI only checked it.
 */
const TITLE_BOOST = 0.3;

export type CorpusOptions = {
  /** Reads the documents again, for `refresh`; without it the corpus is fixed and refresh is not offered. */
  reload?: () => Promise<readonly CorpusDocument[]>;
  /** Epoch milliseconds; the load time is the watermark of a corpus whose documents carry no date. */
  now?: () => number;
};

type Loaded = {
  documents: readonly CorpusDocument[];
  index: MiniSearch<CorpusDocument & { id: number }>;
  byLocator: Map<string, { doc: CorpusDocument; revision: string }>;
  revisions: string[];
  loadedAt: number;
};

/**
 * The corpus over `documents`, with every action of the provider protocol. Locators are the
 * documents' own; each candidate carries `metadata.revision`, a hash of the document's title and
 * text. `expand` answers the document's text, `locator_expired` when the caller's revision is no
 * longer the document's or the document left the corpus at a reload, and `locator_unknown` for a
 * locator no load of this corpus ever held.
 */
export function corpusAdapter(
  name: string,
  scope: string,
  documents: readonly CorpusDocument[],
  options: CorpusOptions = {},
): SearchAdapter {
  const now = options.now ?? (() => Date.now());
  let loaded = load(documents, now());
  /** Every locator any load held: what `locator_expired` rests on after a reload. */
  const held = new Set(loaded.byLocator.keys());

  function health(): HealthAnswer {
    return {
      status: "ok",
      coverage: "complete",
      watermark: watermark(loaded),
      document_count: loaded.documents.length,
    };
  }

  const adapter: SearchAdapter = {
    name,
    scope,
    search({ query, limit }) {
      const { index, documents, revisions } = loaded;
      const hits = index.search(query)
        // MiniSearch multiplies each score by the number of query terms matched; BM25 is the sum.
        .map((hit) => ({ ...hit, score: hit.score / Math.max(1, hit.queryTerms.length) }))
        .sort((a, b) => b.score - a.score || (a.id as number) - (b.id as number))
        .slice(0, limit);
      const candidates = hits.map((hit) => {
        const doc = documents[hit.id as number] as CorpusDocument;
        return {
          title: doc.title,
          locator: doc.locator,
          snippet: snippetFor(doc.text, hit.terms),
          published_at: doc.published_at ?? null,
          metadata: {
            // Unrounded: the gateway merges shards of one index by this score (docs/protocol.md).
            score: hit.score,
            matched: hit.terms.slice(0, 8),
            revision: revisions[hit.id as number],
          },
        };
      });
      return Promise.resolve({ candidates });
    },
    health: () => Promise.resolve(health()),
    expand({ locator, revision }) {
      const found = loaded.byLocator.get(locator);
      if (found === undefined) {
        return Promise.reject(
          held.has(locator)
            ? new ProviderError(
              "locator_expired",
              "the document left the corpus when it was reloaded; search again",
            )
            : new ProviderError("locator_unknown", "this corpus never held that locator"),
        );
      }
      if (revision !== undefined && revision !== found.revision) {
        return Promise.reject(
          new ProviderError(
            "locator_expired",
            `the document changed since revision ${
              revision.slice(0, 32)
            }; it is now ${found.revision}`,
          ),
        );
      }
      return Promise.resolve({
        title: found.doc.title,
        text: found.doc.text,
        content_type: "text/plain",
        retrieved_at: new Date(loaded.loadedAt).toISOString(),
        revision: found.revision,
      });
    },
  };
  if (options.reload) {
    const reload = options.reload;
    adapter.refresh = async () => {
      loaded = load(await reload(), now());
      for (const locator of loaded.byLocator.keys()) held.add(locator);
      return health();
    };
  }
  return adapter;
}

function load(documents: readonly CorpusDocument[], loadedAt: number): Loaded {
  const index = new MiniSearch<CorpusDocument & { id: number }>({
    fields: ["all", "title"],
    storeFields: [],
    // MiniSearch reads the id through this too.
    extractField: (doc, field) =>
      field === "all" ? `${doc.title}\n${doc.text}` : field === "id" ? doc.id : doc.title,
    tokenize,
    processTerm,
    searchOptions: {
      boost: { all: 1, title: TITLE_BOOST },
      prefix: expandsByPrefix,
      fuzzy: false,
      bm25: BM25,
    },
  });
  index.addAll(documents.map((doc, id) => ({ ...doc, id })));
  const revisions = documents.map(revisionOf);
  const byLocator = new Map<string, { doc: CorpusDocument; revision: string }>();
  documents.forEach((doc, i) => {
    // The first document with a locator wins, as a search would list it first.
    if (!byLocator.has(doc.locator)) {
      byLocator.set(doc.locator, { doc, revision: revisions[i] as string });
    }
  });
  return { documents, index, byLocator, revisions, loadedAt };
}

/**
 * The newest `published_at` that reads as a date, as RFC 3339; else the load time: a corpus is as
 * fresh as its newest document, or as its load when its documents carry no date.
 */
function watermark(loaded: Loaded): string {
  let newest = Number.NEGATIVE_INFINITY;
  for (const doc of loaded.documents) {
    const at = doc.published_at === undefined ? Number.NaN : Date.parse(doc.published_at);
    if (at > newest) newest = at;
  }
  return new Date(Number.isFinite(newest) ? newest : loaded.loadedAt).toISOString();
}

/**
 * A document's revision: 64-bit FNV-1a (two 32-bit lanes) of its title and text, as 16 hex digits.
 * It detects a change, not tampering; the corpus is the operator's own.
 */
export function revisionOf(doc: CorpusDocument): string {
  let a = 0x811c9dc5;
  let b = 0xcbf29ce4;
  const source = `${doc.title}\u0000${doc.text}`;
  for (let i = 0; i < source.length; i++) {
    const c = source.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193) ^ (a >>> 7);
  }
  return (a >>> 0).toString(16).padStart(8, "0") + (b >>> 0).toString(16).padStart(8, "0");
}

/** A window of the text around the first matched term, cut at word boundaries. */
export function snippetFor(text: string, terms: readonly string[]): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const lower = flat.toLowerCase();
  let at = -1;
  for (const term of terms) {
    const i = lower.indexOf(term.toLowerCase());
    if (i !== -1 && (at === -1 || i < at)) at = i;
  }
  if (at === -1 || flat.length <= SNIPPET_CHARS) return flat.slice(0, SNIPPET_CHARS);
  let start = Math.max(0, at - SNIPPET_CHARS / 4);
  const space = flat.lastIndexOf(" ", start);
  start = start === 0 ? 0 : space + 1;
  const end = Math.min(flat.length, start + SNIPPET_CHARS);
  const cut = flat.slice(start, end);
  const trimmed = end < flat.length ? cut.slice(0, cut.lastIndexOf(" ")) : cut;
  return `${start > 0 ? "… " : ""}${trimmed}${end < flat.length ? " …" : ""}`;
}

/**
 * Reads a Markdown document: an optional front matter block of `key: value` lines (title, locator,
 * published_at), else the first `# ` heading as the title and `fallbackLocator` as the locator.
 */
export function parseMarkdownDocument(source: string, fallbackLocator: string): CorpusDocument {
  let body = source.replace(/^\uFEFF/, "").replace(/\r\n?/g, "\n");
  const fields: Record<string, string> = {};
  const front = /^---\n([\s\S]*?)\n---\n?/.exec(body);
  if (front) {
    for (const line of (front[1] as string).split("\n")) {
      const m = /^([a-z_]+):\s*(.*)$/.exec(line.trim());
      if (m) fields[m[1] as string] = (m[2] as string).replace(/^(["'])(.*)\1$/, "$2");
    }
    body = body.slice(front[0].length);
  }
  const heading = /^#\s+(.+)$/m.exec(body);
  const title = fields.title ?? heading?.[1]?.trim() ?? fallbackLocator;
  const text = body
    .replace(/^#{1,6}\s+/gm, "")
    // Markdown's marks go; an underscore inside an identifier (`exit_code`) is text, not emphasis.
    .replace(/[`*>|]|(?<![A-Za-z0-9])_+|_+(?![A-Za-z0-9])/g, "")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1");
  return {
    title,
    locator: fields.locator ?? fallbackLocator,
    text,
    ...(fields.published_at ? { published_at: fields.published_at } : {}),
  };
}
