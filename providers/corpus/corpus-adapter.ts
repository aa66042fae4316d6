/**
 * A full-text search adapter over a list of documents: an inverted index of our own
 * (corpus-index.ts) ranked by stemmed InExpB2 (corpus-rank.ts, corpus-search.ts), with the terms
 * of src/core/terms/text-terms.ts (stopwords out, identifiers whole, prefix matching only for a short query's
 * last term). It answers `stats`, so shards of one index in a score group score with the group's
 * sums. The example corpus providers serve it over HTTP; the composition roots (src/runtime,
 * src/cli, and scripts/build-worker.ts for the Worker) build the `workspace` built-in from it over
 * docs/: one contract, two transports. It needs only Web APIs, so the Worker carries it too.
 */
import { type HealthAnswer, ProviderError, type SearchAdapter } from "../../src/kit/mod.ts";
import { CorpusIndex } from "./corpus-index.ts";
import type { Feedback, RankingModel } from "./corpus-rank.ts";
import { DEFAULT_RANKING, indexStats, type Ranking, searchIndex } from "./corpus-search.ts";

export type CorpusDocument = {
  title: string;
  locator: string;
  text: string;
  published_at?: string;
};

/** How much text around the first match a snippet shows, in characters. */
const SNIPPET_CHARS = 280;

export type CorpusOptions = {
  /**
   * English stemming of titles and text (default on): "aerodynamic" finds "aerodynamics". Turn it
   * off for a corpus of code or of another language, where Porter's English rules would merge
   * words that differ.
   */
  stemming?: boolean;
  /** `dfr` (InExpB2, the default) or `bm25`. */
  model?: RankingModel;
  /**
   * RM3 relevance feedback (off by default; RM3 in corpus-search.ts is the measured setting): never
   * used for a search that carries its score group's statistics.
   */
  feedback?: Feedback | null;
  /** Reads the documents again, for `refresh`; without it the corpus is fixed and refresh is not offered. */
  reload?: () => Promise<readonly CorpusDocument[]>;
  /** Epoch milliseconds; the load time is the watermark of a corpus whose documents carry no date. */
  now?: () => number;
};

type Loaded = {
  documents: readonly CorpusDocument[];
  index: CorpusIndex;
  /**
   * Each shown document's flattened text, made the first time a search shows it: flattening a
   * long page cost more than ranking it (about 0.4 ms for each 40 KB page of docs/, every search).
   */
  flat: Array<FlatText | undefined>;
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
  const ranking: Ranking = {
    stemming: options.stemming ?? DEFAULT_RANKING.stemming,
    model: options.model ?? DEFAULT_RANKING.model,
    feedback: options.feedback ?? DEFAULT_RANKING.feedback,
  };
  const load = (docs: readonly CorpusDocument[], at: number) => loadIndex(docs, at, ranking);
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
    search({ query, limit, collection_stats }) {
      const { index, documents, revisions } = loaded;
      const found = searchIndex(index, query, limit, ranking, collection_stats);
      const candidates = found.map((hit) => {
        const doc = documents[hit.doc] as CorpusDocument;
        return {
          title: doc.title,
          locator: doc.locator,
          // The words as the query wrote them first, then their stems ("studi" of "studies").
          snippet: snippetFor(flatOf(loaded, hit.doc), [...hit.matched, ...hit.terms]),
          published_at: doc.published_at ?? null,
          metadata: {
            // Unrounded: the gateway merges shards of one index by this score (docs/protocol.md).
            score: hit.score,
            matched: hit.matched.slice(0, 8),
            revision: revisions[hit.doc],
          },
        };
      });
      return Promise.resolve({ candidates });
    },
    stats: ({ query }) => Promise.resolve(indexStats(loaded.index, query)),
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

function loadIndex(
  documents: readonly CorpusDocument[],
  loadedAt: number,
  ranking: Ranking,
): Loaded {
  const index = new CorpusIndex(documents, ranking.stemming, ranking.feedback !== null);
  const revisions = documents.map(revisionOf);
  const byLocator = new Map<string, { doc: CorpusDocument; revision: string }>();
  documents.forEach((doc, i) => {
    // The first document with a locator wins, as a search would list it first.
    if (!byLocator.has(doc.locator)) {
      byLocator.set(doc.locator, { doc, revision: revisions[i] as string });
    }
  });
  return { documents, index, flat: [], byLocator, revisions, loadedAt };
}

function flatOf(loaded: Loaded, doc: number): FlatText {
  return loaded.flat[doc] ??= flatText((loaded.documents[doc] as CorpusDocument).text);
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

/** A document's text as snippets read it: whitespace collapsed, and that lowercased. */
export type FlatText = { flat: string; lower: string };

export function flatText(text: string): FlatText {
  const flat = text.replace(/\s+/g, " ").trim();
  return { flat, lower: flat.toLowerCase() };
}

/** A window of the text around the first matched term, cut at word boundaries. */
export function snippetFor(text: string | FlatText, terms: readonly string[]): string {
  const { flat, lower } = typeof text === "string" ? flatText(text) : text;
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

/** Markdown's marks dropped; an underscore inside an identifier (`exit_code`) is text, not emphasis. */
function withoutMarks(text: string): string {
  return text.replace(/[`*>|]|(?<![A-Za-z0-9])_+|_+(?![A-Za-z0-9])/g, "");
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
  const title = fields.title ?? (heading ? withoutMarks(heading[1] as string).trim() : undefined) ??
    fallbackLocator;
  const text = withoutMarks(
    body
      .replace(/^#{1,6}\s+/gm, "")
      // A code fence's line (its language word with it) and a table's rule row are layout, not text.
      .replace(/^\s*(```|~~~).*$/gm, "")
      .replace(/^\s*\|?(\s*:?-{3,}:?\s*\|?)+\s*$/gm, ""),
  ).replace(/\[([^\]]*)\]\([^)]*\)/g, "$1");
  return {
    title,
    locator: fields.locator ?? fallbackLocator,
    text,
    ...(fields.published_at ? { published_at: fields.published_at } : {}),
  };
}
