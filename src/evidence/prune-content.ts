/// <reference lib="dom" />
/**
 * Boilerplate inside a chosen main content, whichever candidate chose it: chrome by name, blocks
 * that are mostly links (teaser lists, tag clouds, "read more" lines), short blocks of links the page
 * repeats (a share bar under every paragraph, a menu printed twice), and the page's title repeated as
 * its first heading (the answer's `title` carries it).
 */
import { dropChrome, nameWords } from "./boilerplate.ts";
import {
  holds,
  linkShare,
  MAX_PARAGRAPH_LINK_SHARE,
  measure,
  remeasure,
  type Stats,
} from "./content-stats.ts";

/**
 * A block whose link text is more than this share of its text is a list of links, not prose. An
 * article's paragraph with many citations stays well under it; a related list or a tag line is
 * nearly all link.
 */
export const LINK_BLOCK_SHARE = 0.7;

/**
 * A block of fewer characters than this that the page repeats, and that is mostly links (more than
 * MAX_PARAGRAPH_LINK_SHARE of it), is chrome (a share bar, a "back to top", a menu); longer repeated
 * text is a quoted passage, and repeated text that is mostly words is the article's own (the same
 * ingredient line in each day of a meal plan, a "See it now: Amazon" under each product, a lead
 * paragraph the page also shows as a teaser), all kept.
 */
export const REPEATED_MAX_CHARS = 120;

/** Elements that are blocks of text or lists of them, whose link share is judged. */
const LINK_BLOCKS = new Set([
  "P",
  "DIV",
  "SECTION",
  "ARTICLE",
  "UL",
  "OL",
  "DL",
  "LI",
  "TABLE",
  "HEADER",
  "H2",
  "H3",
  "H4",
  "H5",
  "H6",
]);

/**
 * Elements whose repeated short text is chrome; table cells repeat as a matter of course ("yes",
 * "-").
 */
const REPEAT_BLOCKS = new Set(["P", "DIV", "SECTION", "UL", "OL", "LI", "SPAN", "A", "HEADER"]);

/**
 * A short block holding a `<time>`, a date or a clock time in a few words, a byline, or a line
 * opening with a publishing label ("Updated 5:27 am", "By Jane Roe", "Source: agencies") is about
 * the article, not of it: the answer's own fields say when and where the page was read. Longer
 * blocks are prose that happens to start so.
 */
export const DATELINE_MAX_CHARS = 100;

/** A dateline says its date in at most this many words; a sentence with a year says more. */
export const DATE_MAX_WORDS = 8;

const DATELINE =
  /^(?:updated|published|posted|first published|last updated|aktualisiert|veröffentlicht|publié|mis à jour|обновлено|опубликовано|filed under|copyright|©)(?=[\s:|,.]|$)|^(?:source|sources|more|related|see also|read more|quelle|fuente)\s?:|^(?:by|von|par|por)\s+\p{Lu}\p{L}*\.?\s+\p{Lu}/iu;

const DATE = /\b(?:19|20)\d\d\b|\b\d{1,2}:\d\d\b/;

/** Labels of advertisement slots, in the languages of our test pages and the benchmark's. */
const AD_LABELS = new Set([
  "ad",
  "advert",
  "advertisement",
  "anzeige",
  "werbung",
  "publicité",
  "publicidad",
  "pubblicità",
  "реклама",
  "广告",
  "إعلان",
  "sponsored",
]);

/**
 * A figure, or a block the page names as an image, holding a picture and less text than this is a
 * picture with its caption and credit, which are about the picture, not the article's text.
 */
export const FIGURE_MAX_CHARS = 400;

const PICTURE_WORDS = new Set(["image", "img", "photo", "picture", "media", "figure", "thumbnail"]);

/** A picture with a caption: a figure or a named image block, with an image and no code or table. */
function pictured(element: Element, length: number): boolean {
  if (length > FIGURE_MAX_CHARS) return false;
  if (element.tagName !== "FIGURE" && !nameWords(element).some((w) => PICTURE_WORDS.has(w))) {
    return false;
  }
  return element.querySelector("img, picture, video") !== null &&
    element.querySelector("pre, table, blockquote") === null;
}

const normal = (text: string) => text.replace(/\s+/g, " ").trim().toLowerCase();

/**
 * Characters of `text` that are surely not white space to `\s` (all below U+0021, U+00A0, U+1680,
 * U+2000 to U+205F, U+3000 and U+FEFF count as white space): normal() keeps each of the others,
 * and lower-casing never shortens a text, so they bound its normalised length from below.
 */
function solidChars(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (
      c > 32 && c !== 0xa0 && c !== 0x1680 && (c < 0x2000 || c > 0x205f) && c !== 0x3000 &&
      c !== 0xfeff
    ) n++;
  }
  return n;
}

/** Texts of short blocks seen more than once in `body`. */
export function repeatedTexts(body: Element): Set<string> {
  const seen = new Map<string, number>();
  // One walk: each element's raw text length from its children's, so only short blocks' text is
  // ever built (textContent of every element would cost the tree's size times its depth); and
  // the characters in it that are surely not white space, which its normalised text keeps, so a
  // block of prose longer than a repeated text can be is not normalised either.
  let solid = 0;
  const visit = (element: Element): number => {
    let length = 0;
    const solidBefore = solid;
    for (let node = element.firstChild; node !== null; node = node.nextSibling) {
      if (node.nodeType === 3) {
        const text = node.nodeValue ?? "";
        length += text.length;
        solid += solidChars(text);
      } else if (node.nodeType === 1) length += visit(node as Element);
    }
    if (
      REPEAT_BLOCKS.has(element.tagName) && length <= REPEATED_MAX_CHARS * 4 &&
      solid - solidBefore <= REPEATED_MAX_CHARS
    ) {
      const key = normal(element.textContent ?? "");
      if (key.length >= 2 && key.length <= REPEATED_MAX_CHARS) {
        seen.set(key, (seen.get(key) ?? 0) + 1);
      }
    }
    return length;
  };
  visit(body);
  return new Set([...seen].filter(([, n]) => n > 1).map(([key]) => key));
}

/**
 * Prunes `root` in place; `repeated` are the page's repeated short texts, `title` its title, and
 * `measured` the measures of root's tree when they were taken already (brought up to date here).
 */
export function pruneContent(
  root: Element,
  repeated: ReadonlySet<string>,
  title: string | null,
  measured?: Map<Element, Stats>,
) {
  const stats = measured ?? measure(root);
  remeasure(root, stats, dropChrome(root, stats));
  const doomed: Element[] = [];
  const visit = (element: Element) => {
    for (let child = element.firstElementChild; child !== null; child = child.nextElementSibling) {
      const s = stats.get(child);
      if (s === undefined) continue;
      const linky = LINK_BLOCKS.has(child.tagName) && s.text > 0 &&
        linkShare(s) > LINK_BLOCK_SHARE;
      const echoed = REPEAT_BLOCKS.has(child.tagName) && s.text <= REPEATED_MAX_CHARS &&
        linkShare(s) > MAX_PARAGRAPH_LINK_SHARE && repeated.has(normal(child.textContent ?? ""));
      if (
        linky || echoed || label(child, s.text) || pictured(child, s.text) ||
        followCall(child, s.text)
      ) doomed.push(child);
      else visit(child);
    }
  };
  visit(root);
  for (const element of doomed) element.remove();
  dropTitleHeading(root, title);
  dropEmptySections(root);
}

/**
 * Headings with nothing under them: what was under them (a related list, a share bar) was pruned,
 * or never was. A heading followed by one of its own level or higher, or by nothing, goes.
 */
function dropEmptySections(root: Element) {
  const headings = [...root.querySelectorAll("h1, h2, h3, h4, h5, h6")].reverse();
  for (const heading of headings) {
    const next = heading.nextElementSibling;
    const level = Number(heading.tagName[1]);
    const nextLevel = next !== null && /^H[1-6]$/.test(next.tagName) ? Number(next.tagName[1]) : 9;
    const textAfter = (heading.nextSibling?.nodeType === 3) &&
      (heading.nextSibling.nodeValue ?? "").trim() !== "";
    if (!textAfter && (next === null || nextLevel <= level)) heading.remove();
  }
}

/** A dateline or an advertisement's label. */
function label(element: Element, length: number): boolean {
  if (length > DATELINE_MAX_CHARS || !REPEAT_BLOCKS.has(element.tagName)) return false;
  const text = normal(element.textContent ?? "");
  if (AD_LABELS.has(text) || holds(element, "TIME")) return true;
  const original = (element.textContent ?? "").trim();
  if (DATELINE.test(original)) return true;
  return DATE.test(text) && (text.match(/[\p{L}\p{N}]+/gu) ?? []).length <= DATE_MAX_WORDS;
}

/**
 * A block of at most this many characters that asks the reader to follow someone on a social
 * network ("Follow us on Twitter @site", "Folgen Sie uns auf Instagram") is the site's or the
 * author's sign-off, not the article: a sign-off is a sentence or two, with an address or a book
 * at most (those of the tuning half's pages held 55 to 212 characters), while a paragraph of an
 * article that happens to say so says more.
 */
export const FOLLOW_MAX_CHARS = 220;

const FOLLOW =
  /\b(?:follow|folgen?|suivez|sigue|síguenos|siga|seguici|segui|volg)\b[^.!?\n]{0,40}?\b(?:on|at|auf|sur|en|su|no|op)\s+(?:twitter|facebook|instagram|youtube|linkedin|tiktok|telegram|threads|mastodon|bluesky|whatsapp)\b|(?:подписывайтесь|следите)[^.!?\n]{0,40}?(?:telegram|вконтакте|twitter|youtube|телеграм)/iu;

/** A sign-off asking to follow someone on a social network (FOLLOW_MAX_CHARS). */
function followCall(element: Element, length: number): boolean {
  return length <= FOLLOW_MAX_CHARS && REPEAT_BLOCKS.has(element.tagName) &&
    FOLLOW.test(element.textContent ?? "");
}

/**
 * A headline that says what the title says is dropped when at least this share of its words are
 * the title's: the title often adds the site's name, and the headline sometimes a word or two.
 */
export const TITLE_WORDS_SHARE = 0.8;

const words = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/** Every `h1`, and the first heading, when they repeat the page's title (the headline). */
function dropTitleHeading(root: Element, title: string | null) {
  if (title === null) return;
  const titleWords = new Set(words(title));
  const first = root.querySelector("h1, h2, h3");
  for (const heading of new Set([...root.querySelectorAll("h1"), ...(first ? [first] : [])])) {
    const said = words(heading.textContent ?? "");
    const shared = said.filter((w) => titleWords.has(w)).length;
    if (said.length > 0 && shared >= TITLE_WORDS_SHARE * said.length) heading.remove();
  }
}
