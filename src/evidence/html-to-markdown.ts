/// <reference lib="dom" />
/**
 * The extractor's internals, loaded on demand by extractPage. Our own heuristics (main-content.ts)
 * pick the page's main content from a linkedom document; when their pick leaves doubt, Readability
 * reads the same document and content-choice.ts keeps the better candidate by measurable signals.
 * The chosen content's links are made absolute and listed, it is pruned of boilerplate
 * (prune-content.ts), and dom-markdown.ts writes it as markdown.
 */
import { parseHTML } from "linkedom";
import { MAX_EVIDENCE_LINKS } from "../protocol/fetch-limits.ts";
import type { EvidenceLink } from "./fetch-types.ts";
import { absoluteLink } from "./absolute-link.ts";
import { chooseContent, type Chosen, readabilityCandidate } from "./content-choice.ts";
import { textLength } from "./content-stats.ts";
import { domMarkdown, type Wanted } from "./dom-markdown.ts";
import { pruneContent, repeatedTexts } from "./prune-content.ts";

/**
 * Main text shorter than this after pruning means the pick or the pruning went wrong (a page with
 * nothing to say has no title to fetch it by either): Readability's pick is asked for instead.
 */
export const MIN_KEPT_CHARS = 200;

export type Converted = {
  title: string | null;
  /** The content's markdown; with `wanted`, maybe a prefix of it that `wanted.enough` accepted. */
  markdown: string;
  links: EvidenceLink[];
  /** Which candidate the content came from (content-choice.ts). */
  by: Chosen["by"];
};

export function htmlToMarkdown(html: string, url: URL, wanted?: Wanted): Converted {
  const { document } = parseHTML(html);
  const pageTitle = document.title?.replace(/\s+/g, " ").trim() || null;
  const body = document.body as unknown as Element | null;
  if (body === null || body === undefined) {
    return { title: pageTitle, markdown: "", links: [], by: "baseline" };
  }
  const repeated = repeatedTexts(body);
  let chosen = chooseContent(body, document as unknown as Document);
  // Listed before pruning: a list of links in the content (a docs index, a forum's threads) is
  // left out of the text, yet it is where a reader, or a crawl, goes next. Chrome is already gone.
  let links = absoluteLinks(chosen.root, url);
  pruneContent(chosen.root, repeated, chosen.title ?? pageTitle, chosen.stats);
  if (chosen.by !== "readability" && textLength(chosen.root.textContent ?? "") < MIN_KEPT_CHARS) {
    // Our pick, once pruned, kept next to nothing of a page: a second opinion, pruned the same way
    // (Readability's candidate as the choice saw it, when the choice asked for it).
    const other = chosen.passed === undefined ? readabilityCandidate(html) : chosen.passed;
    if (other !== null) {
      const otherLinks = absoluteLinks(other.root, url);
      pruneContent(other.root, repeated, other.title ?? pageTitle);
      const kept = textLength(other.root.textContent ?? "");
      if (kept > textLength(chosen.root.textContent ?? "")) {
        chosen = { root: other.root, title: other.title, by: "readability" };
        links = otherLinks;
      }
    }
  }
  const title = chosen.title ?? pageTitle;
  // Without a title, the answer's is the markdown's first heading, which a prefix may not hold.
  const markdown = domMarkdown(chosen.root, title === null ? undefined : wanted);
  // A prefix that fell short of what is wanted: the tree is spent, the page is read again whole.
  if (markdown === null) return htmlToMarkdown(html, url);
  return { title, markdown, links, by: chosen.by };
}

/** Makes the links and images of `root` absolute (dropping those that cannot be) and lists links. */
function absoluteLinks(root: Element, url: URL): EvidenceLink[] {
  const links: EvidenceLink[] = [];
  const seen = new Set<string>();
  for (const anchor of root.querySelectorAll("a")) {
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
  for (const image of root.querySelectorAll("img")) {
    const src = image.getAttribute("src");
    const absolute = src === null ? null : absoluteLink(src, url);
    if (absolute === null) image.removeAttribute("src");
    else image.setAttribute("src", absolute);
  }
  return links;
}
