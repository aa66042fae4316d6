/**
 * extractPage: the one function that turns a page's decoded body into the returned text, its
 * title, anchors and links. HTML goes through the extractor (html-to-markdown.ts, loaded on demand:
 * it is most of the fetch's code); markdown and plain text are used as served.
 */
import type { EvidenceRoute, FetchFormat } from "../protocol/codes.ts";
import { MAX_EVIDENCE_LINKS } from "../protocol/fetch-limits.ts";
import type { Anchor, EvidenceLink } from "./fetch-types.ts";
import { absoluteLink } from "./absolute-link.ts";
import type { Wanted } from "./dom-markdown.ts";
import { htmlText, htmlTitle, type PreparedHtml, prepareHtml } from "./html-text.ts";
import { anchorsOf, type Heading, headingsOf, plainHeading } from "./page-anchors.ts";
import { lazy } from "../core/lazy-module.ts";

/** What a page's content type says it is: the three kinds a fetch reads. */
export type PageKind = "html" | "markdown" | "text";

export type PageInput = {
  body: string;
  kind: PageKind;
  /** The final URL: relative links resolve against it. */
  url: URL;
  format: FetchFormat;
  maxChars: number;
};

export type ExtractedPage = {
  title: string | null;
  /** The markdown, or the text for format `text`, cut at maxChars. */
  content: string;
  truncated: boolean;
  anchors: Anchor[];
  links: EvidenceLink[];
  route: EvidenceRoute;
};

export async function extractPage(input: PageInput): Promise<ExtractedPage> {
  let markdown: string;
  let title: string | null;
  let links: EvidenceLink[];
  let route: EvidenceRoute;
  let cutMarkup = false;
  switch (input.kind) {
    case "html": {
      const prepared = prepareHtml(input.body);
      // Markdown past what the answer returns is not made: a prefix that fills max_chars will do.
      const enough = (prefix: string) =>
        shownLines(linesOf(prefix), input).join("\n").length > input.maxChars;
      ({ markdown, title, links } = await convertHtml(prepared, input.url, {
        chars: input.maxChars,
        enough,
      }));
      cutMarkup = prepared.cut;
      route = "extracted";
      break;
    }
    case "markdown":
      markdown = input.body;
      links = markdownLinks(markdown, input.url);
      title = null;
      route = "markdown_served";
      break;
    case "text":
      markdown = input.body;
      links = [];
      title = null;
      route = "text_served";
      break;
    default: {
      const never: never = input.kind;
      return never;
    }
  }
  const lines = linesOf(markdown);
  // Served plain text has no markup: none of its lines is a heading.
  const headings: Heading[] = input.kind === "text" ? [] : headingsOf(lines);
  title ??= headings[0]?.heading ?? null;
  const { text, truncated } = cut(shownLines(lines, input).join("\n"), input.maxChars);
  return {
    title,
    content: text,
    truncated: truncated || cutMarkup,
    anchors: await anchorsOf(text.split("\n"), headings),
    links: links.slice(0, MAX_EVIDENCE_LINKS),
    route,
  };
}

/**
 * Markup to markdown through the extractor (loaded on demand); markup too deep for it, or that it
 * fails on (a hostile page is not a bug of ours), is read as plain text instead.
 */
async function convertHtml(prepared: PreparedHtml, url: URL, wanted: Wanted) {
  const fallback = () => ({
    title: htmlTitle(prepared.html),
    markdown: htmlText(prepared.html),
    links: [],
  });
  if (prepared.tooDeep) return fallback();
  const { htmlToMarkdown } = await extractor();
  try {
    return htmlToMarkdown(prepared.html, url, wanted);
  } catch {
    return fallback();
  }
}

/**
 * The extractor's module, imported once: each `import()` goes through the module loader's
 * resolution again (under Node's loader hooks, a round trip to their thread on every page).
 */
const extractor = lazy(() => import("./html-to-markdown.ts"));

/** The first `max` characters, never half a surrogate pair. */
function cut(text: string, max: number): { text: string; truncated: boolean } {
  if (text.length <= max) return { text, truncated: false };
  const end = /[\ud800-\udbff]/.test(text[max - 1] ?? "") ? max - 1 : max;
  return { text: text.slice(0, end), truncated: true };
}

/** A text's lines, line ends made `\n`. */
function linesOf(markdown: string): string[] {
  return markdown.replace(/\r\n?/g, "\n").split("\n");
}

/** The lines returned: the markdown's, or for format `text` the same without their markup. */
function shownLines(lines: string[], input: PageInput): string[] {
  return input.format === "text" && input.kind !== "text" ? textLines(lines) : lines;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/** Markdown lines without their markup, line for line, so the anchors' line numbers still hold. */
function textLines(lines: readonly string[]): string[] {
  let fenced = false;
  return lines.map((line) => {
    if (FENCE.test(line)) {
      fenced = !fenced;
      return "";
    }
    if (fenced) return line;
    if (/^ {0,3}([-*_])( ?\1){2,}\s*$/.test(line)) return "";
    return plainHeading(
      line
        .replace(/!\[[^\]]*\]\([^)]*\)/g, "")
        .replace(/^ {0,3}#{1,6}[ \t]+/, "")
        .replace(/[ \t]+#+[ \t]*$/, "")
        .replace(/^(\s*)>[ ]?/, "$1")
        .replace(/^(\s*)(?:[-*+]|\d+[.)])[ \t]+/, "$1"),
    );
  });
}

/** `[text](url)` links of served markdown, absolute, http and https only, each URL once. */
function markdownLinks(markdown: string, base: URL): EvidenceLink[] {
  const links: EvidenceLink[] = [];
  const seen = new Set<string>();
  for (const match of markdown.matchAll(/(?<!!)\[([^\]\n]*)\]\(\s*<?([^)\s>]+)>?[^)]*\)/g)) {
    const url = absoluteLink(match[2] as string, base);
    if (url === null || seen.has(url)) continue;
    seen.add(url);
    links.push({ url, text: plainHeading(match[1] as string) });
    if (links.length === MAX_EVIDENCE_LINKS) break;
  }
  return links;
}
