/**
 * Linear passes over a page's markup that bound what the extractor is handed: scripts, styles and
 * comments dropped, the rest cut at MAX_EXTRACT_HTML_CHARS, the nesting measured; and the plain
 * text of markup the extractor must not be given (too deep) or could not read.
 */
import { MAX_EXTRACT_DEPTH, MAX_EXTRACT_HTML_CHARS } from "../protocol/fetch-limits.ts";

export type PreparedHtml = { html: string; cut: boolean; tooDeep: boolean };

/** Elements whose content is never the page's text. */
const DROPPED =
  /<(script|style|noscript|template|svg|iframe)\b[^>]*>[\s\S]*?<\/\1\s*>|<!--[\s\S]*?-->/gi;

/** Elements that never hold others, or whose end tag the parser supplies: they add no depth. */
const NO_DEPTH = new Set([
  "area",
  "base",
  "br",
  "col",
  "embed",
  "hr",
  "img",
  "input",
  "link",
  "meta",
  "source",
  "track",
  "wbr",
  "param",
  "p",
  "li",
  "dt",
  "dd",
  "tr",
  "td",
  "th",
  "option",
  "optgroup",
  "thead",
  "tbody",
  "tfoot",
  "rt",
  "rp",
  "colgroup",
  "caption",
  "head",
  "body",
  "html",
  "!doctype",
]);

const TAG = /<(\/?)([a-zA-Z!][a-zA-Z0-9-]*)\b[^>]*?(\/?)>/g;

export function prepareHtml(raw: string): PreparedHtml {
  const dropped = raw.replace(DROPPED, " ");
  const cut = dropped.length > MAX_EXTRACT_HTML_CHARS;
  // A tag the cut went through is dropped whole.
  const html = cut ? dropped.slice(0, MAX_EXTRACT_HTML_CHARS).replace(/<[^>]*$/, "") : dropped;
  let depth = 0;
  let tooDeep = false;
  for (const match of html.matchAll(TAG)) {
    const name = (match[2] as string).toLowerCase();
    if (NO_DEPTH.has(name) || match[3] === "/") continue;
    depth = match[1] === "/" ? Math.max(0, depth - 1) : depth + 1;
    if (depth > MAX_EXTRACT_DEPTH) {
      tooDeep = true;
      break;
    }
  }
  return { html, cut, tooDeep };
}

const BLOCK =
  /<\/?(p|div|br|hr|h[1-6]|li|ul|ol|tr|table|section|article|main|header|footer|nav|aside|blockquote|pre|dl|dt|dd|figure|figcaption)\b[^>]*>/gi;
const ENTITIES: Readonly<Record<string, string>> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: " ",
};

/** The text of markup (prepared by prepareHtml): tags gone, blocks on lines of their own. */
export function htmlText(html: string): string {
  return html
    .replace(/<head\b[\s\S]*?<\/head\s*>/i, "\n")
    .replace(BLOCK, "\n")
    .replace(/<[^>]*>/g, "")
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
      if (name[0] !== "#") return ENTITIES[name.toLowerCase()] ?? whole;
      const code = name[1] === "x" || name[1] === "X"
        ? parseInt(name.slice(2), 16)
        : parseInt(name.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    })
    .split("\n")
    .map((line) => line.replace(/\s+/g, " ").trim())
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/** The `<title>` of markup, or null. */
export function htmlTitle(html: string): string | null {
  const title = /<title\b[^>]*>([^<]*)<\/title>/i.exec(html)?.[1];
  return title === undefined ? null : htmlText(title) || null;
}
