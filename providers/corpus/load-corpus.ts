/**
 * Loads a folder of Markdown, JSON or JSONL documents as corpus documents (Node and Deno).
 * Markdown: front matter `title`, `locator`, `published_at`, else the first heading and the file
 * path. JSON: one document or an array; JSONL: one per line; each `{title, locator, text, published_at?}`.
 */
import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { type CorpusDocument, parseMarkdownDocument } from "./corpus-adapter.ts";

export async function loadCorpus(dir: string, locatorPrefix = ""): Promise<CorpusDocument[]> {
  const files = (await readdir(dir, { recursive: true })).map(String).sort();
  const docs: CorpusDocument[] = [];
  for (const file of files) {
    const path = join(dir, file);
    const rel = relative(dir, path).split("\\").join("/");
    if (file.endsWith(".md")) {
      docs.push(parseMarkdownDocument(await readFile(path, "utf8"), `${locatorPrefix}${rel}`));
    } else if (file.endsWith(".json")) {
      const value: unknown = JSON.parse(await readFile(path, "utf8"));
      for (const item of Array.isArray(value) ? value : [value]) docs.push(asDocument(item, rel));
    } else if (file.endsWith(".jsonl")) {
      const lines = (await readFile(path, "utf8")).split("\n").filter((l) => l.trim() !== "");
      lines.forEach((line, i) => docs.push(asDocument(JSON.parse(line), `${rel}:${i + 1}`)));
    }
  }
  return docs;
}

function asDocument(item: unknown, where: string): CorpusDocument {
  const d = item as Partial<Record<keyof CorpusDocument, unknown>>;
  if (typeof d?.title !== "string" || typeof d.locator !== "string" || typeof d.text !== "string") {
    throw new Error(`${where}: a document needs string title, locator and text`);
  }
  return {
    title: d.title,
    locator: d.locator,
    text: d.text,
    ...(typeof d.published_at === "string" ? { published_at: d.published_at } : {}),
  };
}
