/**
 * A full-text search adapter over a list of documents, with MiniSearch (BM25-like scoring, prefix
 * and fuzzy matching). The example corpus providers serve it over HTTP; the composition roots
 * (src/runtime, src/cli, and scripts/build-worker.ts for the Worker) build the `workspace` built-in
 * from it over docs/: one contract, two transports. It needs only Web APIs, so the Worker carries
 * it too.
 */
import MiniSearch from "minisearch";
import type { SearchAdapter } from "../../src/kit/mod.ts";

export type CorpusDocument = {
  title: string;
  locator: string;
  text: string;
  published_at?: string;
};

/** How much text around the first match a snippet shows, in characters. */
const SNIPPET_CHARS = 280;

export function corpusAdapter(
  name: string,
  scope: string,
  documents: readonly CorpusDocument[],
): SearchAdapter {
  const index = new MiniSearch<CorpusDocument & { id: number }>({
    fields: ["title", "text"],
    storeFields: [],
    searchOptions: { boost: { title: 2 }, prefix: true, fuzzy: 0.15 },
  });
  index.addAll(documents.map((doc, id) => ({ ...doc, id })));
  return {
    name,
    scope,
    search({ query, limit }) {
      const hits = index.search(query).slice(0, limit);
      const candidates = hits.map((hit) => {
        const doc = documents[hit.id as number] as CorpusDocument;
        return {
          title: doc.title,
          locator: doc.locator,
          snippet: snippetFor(doc.text, hit.terms),
          published_at: doc.published_at ?? null,
          metadata: { score: Math.round(hit.score * 1000) / 1000, matched: hit.terms.slice(0, 8) },
        };
      });
      return Promise.resolve({ candidates });
    },
  };
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
