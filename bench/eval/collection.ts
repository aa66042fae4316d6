/**
 * A judged collection in the layout of bench/eval/SOURCE.md: corpus.jsonl, queries.jsonl and
 * qrels.tsv in one folder. Each document is served with the locator `locatorOf(collection, id)`,
 * and a result's document id is read back from the locator's last path segment, so a provider of
 * the user's own over the same collection only has to keep that shape.
 */
import { readFile } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import type { CorpusDocument } from "../../providers/corpus/corpus-adapter.ts";
import { parseQrels, type Qrels } from "../../src/cli/replay/metrics.ts";

export type Query = { id: string; text: string };

export type Collection = {
  name: string;
  documents: CorpusDocument[];
  queries: Query[];
  qrels: Qrels;
};

export function locatorOf(collection: string, id: string): string {
  return `https://${collection}.eval.example/doc/${encodeURIComponent(id)}`;
}

/** The document id a locator names: its last path segment (shared with `tracefetch replay`). */
export { documentIdOf } from "../../src/cli/replay/metrics.ts";

function jsonLines<T>(text: string, file: string): T[] {
  return text.split("\n").filter((line) => line.trim() !== "").map((line, i) => {
    try {
      return JSON.parse(line) as T;
    } catch {
      throw new Error(`${file} line ${i + 1} is not JSON`);
    }
  });
}

export async function loadCollection(folder: string): Promise<Collection> {
  const dir = resolve(folder);
  const name = basename(dir).toLowerCase().replace(/[^a-z0-9-]+/g, "-");
  const read = (file: string) => readFile(join(dir, file), "utf8");
  const [corpus, queries, qrels] = await Promise.all([
    read("corpus.jsonl"),
    read("queries.jsonl"),
    read("qrels.tsv"),
  ]);
  type Row = { id: string | number; title?: string; text?: string };
  return {
    name,
    documents: jsonLines<Row>(corpus, "corpus.jsonl").map((row) => ({
      title: row.title ?? "",
      text: row.text ?? "",
      locator: locatorOf(name, String(row.id)),
    })),
    queries: jsonLines<{ id: string | number; text: string }>(queries, "queries.jsonl")
      .map((q) => ({ id: String(q.id), text: q.text })),
    qrels: parseQrels(qrels),
  };
}
