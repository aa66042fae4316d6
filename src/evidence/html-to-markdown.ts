/// <reference lib="dom" />
/**
 * The extractor's internals, loaded on demand by extractPage: Readability finds the article in a
 * linkedom document (no navigation, footer or cookie banner), its links are made absolute, and
 * turndown writes it as markdown from the parsed node (its browser build cannot parse a string on
 * Workers, which have no `document`).
 */
import { Readability } from "@mozilla/readability";
import { parseHTML } from "linkedom";
import TurndownService from "turndown";
import { MAX_EVIDENCE_LINKS } from "../protocol/fetch-limits.ts";
import type { EvidenceLink } from "./fetch-types.ts";
import { absoluteLink } from "./absolute-link.ts";

export type Converted = { title: string | null; markdown: string; links: EvidenceLink[] };

export function htmlToMarkdown(html: string, url: URL): Converted {
  const { document } = parseHTML(html);
  const pageTitle = document.title?.trim() || null;
  // Readability takes the document apart; the page's title is read first. Its article comes back
  // as the element itself, not as markup to parse a second time.
  const article = new Readability<Element>(document as unknown as Document, {
    serializer: (node) => node as Element,
  }).parse();
  const main = article?.content ?? (document.body as unknown as Element | null);
  if (main === null || main === undefined) return { title: pageTitle, markdown: "", links: [] };
  const links: EvidenceLink[] = [];
  const seen = new Set<string>();
  for (const anchor of main.querySelectorAll("a")) {
    const href = anchor.getAttribute("href");
    const absolute = href === null ? null : absoluteLink(href, url);
    if (absolute === null) {
      anchor.removeAttribute("href");
      continue;
    }
    anchor.setAttribute("href", absolute);
    if (!seen.has(absolute) && links.length < MAX_EVIDENCE_LINKS) {
      seen.add(absolute);
      links.push({ url: absolute, text: (anchor.textContent ?? "").replace(/\s+/g, " ").trim() });
    }
  }
  for (const image of main.querySelectorAll("img")) {
    const src = image.getAttribute("src");
    const absolute = src === null ? null : absoluteLink(src, url);
    if (absolute === null) image.removeAttribute("src");
    else image.setAttribute("src", absolute);
  }
  const turndown = new TurndownService({
    headingStyle: "atx",
    codeBlockStyle: "fenced",
    bulletListMarker: "-",
  });
  const markdown = turndown.turndown(main as HTMLElement).trim();
  const title = article?.title?.trim() || pageTitle;
  return { title, markdown, links };
}
