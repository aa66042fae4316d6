/// <reference lib="dom" />
/**
 * Markdown of a main-content element through turndown, handed the parsed node (its browser build
 * cannot parse a string on Workers, which have no `document`): ATX headings, fenced code, `-`
 * bullets, and data tables as GFM pipe tables. A layout table (nested tables, or one column) is
 * read as its cells' blocks instead: a pipe table of one column says nothing a paragraph does not.
 */
import TurndownService from "turndown";
import { textLength } from "./content-stats.ts";

/** Cells of a GFM table row, pipes inside escaped, line breaks made spaces. */
function cell(content: string): string {
  return content.replace(/\s*\n+\s*/g, " ").replace(/\|/g, "\\|").trim();
}

/** A table's own rows (not those of a table inside it) and their cell counts, read once a table. */
type Shape = { rows: Element[]; cells: number[]; data: boolean };

const shapes = new WeakMap<Element, Shape>();

function shapeOf(table: Element): Shape {
  let shape = shapes.get(table);
  if (shape !== undefined) return shape;
  const rows: Element[] = [];
  let nested = false;
  const visit = (element: Element) => {
    for (let child = element.firstElementChild; child !== null; child = child.nextElementSibling) {
      if (child.tagName === "TABLE") nested = true;
      else if (child.tagName === "TR") rows.push(child);
      else visit(child);
    }
  };
  visit(table);
  const cells = rows.map((row) => {
    let n = 0;
    for (let cell = row.firstElementChild; cell !== null; cell = cell.nextElementSibling) {
      if (cell.tagName === "TD" || cell.tagName === "TH") n++;
    }
    return n;
  });
  // A table of data: no table inside, and some row of at least two cells.
  shape = { rows, cells, data: !nested && cells.some((n) => n >= 2) };
  shapes.set(table, shape);
  return shape;
}

function dataTable(table: Element): boolean {
  return shapeOf(table).data;
}

function insideDataTable(node: Node): boolean {
  const table = (node as Element).closest?.("table");
  return table !== null && table !== undefined && dataTable(table);
}

/** Elements whose markdown is a block of its own in every use below. */
const BLOCK_TAGS = ["P", "DIV", "SECTION", "UL", "OL", "TABLE", "BLOCKQUOTE", "PRE"] as const;
const HEADINGS = ["H1", "H2", "H3", "H4", "H5", "H6"] as const;

const BLOCKS = new Set<string>([...BLOCK_TAGS, ...HEADINGS, "LI"]);

/** Whether a block element is inside `element` (a walk: a selector is parsed anew on each call). */
function holdsBlock(element: Element): boolean {
  for (let child = element.firstElementChild; child !== null; child = child.nextElementSibling) {
    if (BLOCKS.has(child.tagName) || holdsBlock(child)) return true;
  }
  return false;
}

let service: TurndownService | null = null;

function turndown(): TurndownService {
  if (service !== null) return service;
  const made = new TurndownService({
    headingStyle: "atx",
    codeBlockStyle: "fenced",
    bulletListMarker: "-",
  });
  made.addRule("tableCell", {
    filter: (node) => (node.nodeName === "TD" || node.nodeName === "TH") && insideDataTable(node),
    replacement: (content) => ` ${cell(content)} |`,
  });
  made.addRule("tableRow", {
    filter: (node) => node.nodeName === "TR" && insideDataTable(node),
    replacement: (content, node) => {
      const row = node as Element;
      const { rows, cells } = shapeOf(row.closest("table") as Element);
      const line = `|${content}`;
      if (rows[0] !== row) return `\n${line}`;
      const width = Math.max(...cells);
      const padded = line + " |".repeat(Math.max(0, width - (cells[0] ?? 0)));
      return `\n${padded}\n|${" --- |".repeat(width)}`;
    },
  });
  made.addRule("tableSection", {
    filter: (node) => ["THEAD", "TBODY", "TFOOT"].includes(node.nodeName) && insideDataTable(node),
    replacement: (content) => content,
  });
  made.addRule("table", {
    filter: (node) => node.nodeName === "TABLE" && dataTable(node as Element),
    replacement: (content) => `\n\n${content.replace(/^\n+/, "")}\n\n`,
  });
  // A link around blocks (a teaser card) has no markdown form: its blocks are kept, unlinked.
  made.addRule("blockLink", {
    filter: (node) => node.nodeName === "A" && holdsBlock(node as Element),
    replacement: (content) => `\n\n${content.trim()}\n\n`,
  });
  // A link around a picture alone (the picture in a wrapper turndown reads as a block) is written
  // on one line, so that format `text` can take it off whole rather than leave its address.
  made.addRule("pictureLink", {
    filter: (node) =>
      node.nodeName === "A" && (node.textContent ?? "").trim() === "" &&
      !holdsBlock(node as Element),
    replacement: (content, node) => {
      const picture = content.replace(/\s+/g, " ").trim();
      const href = (node as Element).getAttribute("href");
      return picture === "" ? "" : href === null ? picture : `[${picture}](${href})`;
    },
  });
  made.addRule("caption", {
    filter: (node) => node.nodeName === "CAPTION",
    replacement: (content) => `\n\n${content.trim()}\n\n`,
  });
  service = made;
  return made;
}

/**
 * How much of a content the caller reads: `chars` characters of its text, and `enough` says
 * whether a prefix of its markdown (ending at a line's end) already gives them.
 */
export type Wanted = { chars: number; enough: (prefix: string) => boolean };

/**
 * The content is cut once the text before the cut holds this share more than the caller reads,
 * and this many characters more: markup taken off a line, or white space a block collapses, then
 * still leaves enough text (when it does not, the whole is converted again, once).
 */
export const CUT_SLACK_SHARE = 1.1;
export const CUT_SLACK_CHARS = 1_000;

/** Blocks whose markdown stands between blank lines whatever follows: a cut between two is clean. */
const CUT_BLOCKS = new Set<string>([
  ...BLOCK_TAGS,
  ...HEADINGS,
  "ARTICLE",
  "MAIN",
  "DL",
  "HR",
  "FIGURE",
]);

/** Blocks a cut may go inside: their markdown is their content's between blank lines. */
const CUT_WRAPPERS = new Set(["DIV", "SECTION", "ARTICLE", "MAIN"]);

/** Text of the paragraph put at the cut: private-use characters, which turndown never escapes. */
const CUT_MARK = "\ue000tracefetchcut\ue001";

/**
 * The markdown of `root`, which it takes over: turndown rewrites the text of the tree it reads, so
 * it copies the node it is handed first; the extractor's tree is read no more, so turndown is
 * handed it as that copy would be, out of its tree (nothing above it is read), and copies nothing.
 *
 * With `wanted`, a long content is cut between two blocks once the text before the cut holds what
 * the caller reads, and a paragraph marking the cut takes the rest's place: the markdown before
 * the mark is the whole's, since a block's markdown reads nothing after it but whether a block
 * follows. That prefix is returned when `wanted.enough` accepts it; null when it does not.
 */
export function domMarkdown(root: Element, wanted?: Wanted): string | null {
  root.remove();
  const cut = wanted === undefined ? false : cutContent(root, wanted.chars);
  const own = root as Element & { cloneNode(deep?: boolean): Node };
  own.cloneNode = () => own;
  const markdown = turndown().turndown(own as HTMLElement);
  if (!cut) return markdown.trim();
  const at = markdown.indexOf(CUT_MARK);
  if (at < 0 || markdown.lastIndexOf(CUT_MARK) !== at) return null;
  const prefix = markdown.slice(0, at).replace(/\n+$/, "").trimStart();
  return wanted !== undefined && /\S/.test(prefix) && wanted.enough(prefix) ? prefix : null;
}

/**
 * Cuts `root` after the first block past which its text holds CUT_SLACK more than `chars`, when
 * the next block begins after white space only; the cut goes into a wrapper holding that point.
 * Everything after the cut goes, a paragraph holding CUT_MARK takes its place. False: no cut.
 */
function cutContent(root: Element, chars: number): boolean {
  let need = chars * CUT_SLACK_SHARE + CUT_SLACK_CHARS;
  let parent = root;
  for (;;) {
    let node: ChildNode | null = parent.firstChild;
    let inside: Element | null = null;
    for (; node !== null; node = node.nextSibling) {
      const length = textLength(node.textContent ?? "");
      if (length < need) {
        need -= length;
        continue;
      }
      if (node.nodeType === 1 && CUT_WRAPPERS.has((node as Element).tagName)) {
        inside = node as Element;
      }
      break;
    }
    if (node === null) return false;
    if (inside !== null) {
      parent = inside;
      continue;
    }
    for (; node !== null; node = node.nextSibling) {
      if (node.nodeType !== 1 || !CUT_BLOCKS.has((node as Element).tagName)) continue;
      let next = node.nextSibling;
      while (next !== null && next.nodeType === 3 && (next.nodeValue ?? "").trim() === "") {
        next = next.nextSibling;
      }
      if (next !== null && next.nodeType === 1 && CUT_BLOCKS.has((next as Element).tagName)) break;
    }
    if (node === null) return false;
    for (let at: Node = node; at !== root; at = at.parentNode as Node) {
      while (at.nextSibling !== null) at.nextSibling.remove();
    }
    const mark = (root.ownerDocument as Document).createElement("p");
    mark.textContent = CUT_MARK;
    node.after(mark);
    return true;
  }
}
