/// <reference lib="dom" />
/**
 * The choice between candidates for a page's main content: ours (main-content.ts), Readability's,
 * and the baseline, the whole body without its chrome. Readability is run only when our
 * candidate's signals leave doubt, or when our pick is the whole page: it costs about twice a parse,
 * and on a page where ours holds long prose with few links it could only match it. It reads the
 * page's own document, whose chrome ours already dropped, not a second parse; as it changes the
 * document, ours is kept as a copy.
 */
import { Readability } from "@mozilla/readability";
import { parseHTML } from "linkedom";
import { linkShare, measure, type Stats } from "./content-stats.ts";
import { dropChrome } from "./boilerplate.ts";
import { mainContent } from "./main-content.ts";

/** Readability's candidate: its article element and title. */
export type ReadabilityPick = { root: Element; title: string | null };

export type Chosen = {
  root: Element;
  /** Readability's title when its candidate was kept (it reads `og:title` and headings). */
  title: string | null;
  by: "ours" | "readability" | "baseline";
  /**
   * Readability's candidate when it was asked and not kept (null when it found none), so that a
   * second opinion need not ask it again; absent when it was not asked.
   */
  passed?: ReadabilityPick | null;
  /** The measures of root's tree, when the choice took them (pruning reads them). */
  stats?: Map<Element, Stats>;
};

/**
 * Our candidate is trusted without a second opinion when it holds at least this many characters
 * of prose: a news article's body is 2,000 or more; below it, pages of short posts, listings and
 * product pages are where heuristics disagree.
 */
export const TRUSTED_MASS = 1_500;

/** ...and at least this many paragraphs: one long block may be a single teaser or a legal notice. */
export const TRUSTED_PARAGRAPHS = 3;

/** ...and a link share at most this: a pick with more links is likely a listing. */
export const TRUSTED_LINK_SHARE = 0.25;

/**
 * Readability's candidate replaces ours when it holds at least this factor more prose: ours then
 * took one part of an article that the page split (our measure holds one share of the prose).
 */
export const READABILITY_GAIN = 1.3;

/**
 * A pick of the cover walk (no container named as the article) holding at least this share of the
 * page's prose is the page itself, not an element of it: the prose is spread over the article and
 * teasers or comments beside it, and Readability, which scores each block, is asked even when our
 * signals look trusted. Picks of the tuning half's pages that are the article hold less, or are the
 * article alone on its page (0.8 to 0.95 gave the same; forcing our pick to the body there, asking
 * Readability raised F1 from 0.970 to 0.981).
 */
export const BROAD_SHARE = 0.9;

/**
 * ...and Readability's candidate replaces such a broad pick when it holds at least this share of
 * its prose: the article within the page; less is a teaser or a caption (0 to 0.3 scored the same on
 * the tuning half with our pick forced to the body; 0.6 kept the body where Readability was right).
 */
export const READABILITY_IN_BROAD = 0.3;

/** The main content of `body`, the body of `document` (both changed in place). */
export function chooseContent(body: Element, document: Document): Chosen {
  const ours = mainContent(body);
  const signals = ours.stats.get(ours.root) ?? { text: 0, links: 0, mass: 0, paragraphs: 0 };
  const total = ours.stats.get(body)?.mass ?? 0;
  const broad = ours.by === "cover" && signals.mass >= BROAD_SHARE * total;
  if (trusted(signals) && !broad) {
    return { root: ours.root, title: null, by: "ours", stats: ours.stats };
  }
  const by = ours.root === body ? "baseline" : "ours";
  // The document is now as readabilityCandidate makes it (parsed, chrome dropped).
  const kept = ours.root.cloneNode(true) as Element;
  const other = readabilityPick(document);
  if (other !== null) {
    const stats = measure(other.root);
    const theirs = stats.get(other.root);
    const wanted = broad ? READABILITY_IN_BROAD : READABILITY_GAIN;
    if (theirs !== undefined && theirs.mass >= wanted * signals.mass) {
      return { root: other.root, title: other.title, by: "readability", stats };
    }
  }
  return { root: kept, title: null, by, passed: other };
}

function trusted(stats: Stats): boolean {
  return stats.mass >= TRUSTED_MASS && stats.paragraphs >= TRUSTED_PARAGRAPHS &&
    linkShare(stats) <= TRUSTED_LINK_SHARE;
}

/** Readability's candidate from a parse of `html` of its own. */
export function readabilityCandidate(html: string): ReadabilityPick | null {
  const { document } = parseHTML(html);
  // Readability reads the page without the chrome ours dropped: it turns a banner made of inline
  // text into a paragraph and drops its class, after which no name tells it apart.
  const body = document.body as unknown as Element | null;
  if (body !== null && body !== undefined) dropChrome(body, measure(body));
  return readabilityPick(document as unknown as Document);
}

/** Readability's candidate from `document`, which it changes. */
function readabilityPick(document: Document): ReadabilityPick | null {
  // The article comes back as the element itself, not as markup to parse a third time, with its
  // classes kept: pruning reads them to find the chrome left in.
  const article = new Readability<Element>(document, {
    serializer: (node) => node as Element,
    keepClasses: true,
  }).parse();
  if (article === null || article.content === null || article.content === undefined) return null;
  return { root: article.content, title: article.title?.trim() || null };
}
