/// <reference lib="dom" />
/**
 * Markdown of a main-content element through turndown, handed the parsed node (its browser build
 * cannot parse a string on Workers, which have no `document`): ATX headings, fenced code, `-`
 * bullets, and data tables as GFM pipe tables. A layout table (nested tables, or one column) is
 * read as its cells' blocks instead: a pipe table of one column says nothing a paragraph does not.
 */
import TurndownService from "turndown";

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

const BLOCKS = new Set([
  "P",
  "DIV",
  "H1",
  "H2",
  "H3",
  "H4",
  "H5",
  "H6",
  "UL",
  "OL",
  "LI",
  "TABLE",
  "BLOCKQUOTE",
  "PRE",
  "SECTION",
]);

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
  made.addRule("caption", {
    filter: (node) => node.nodeName === "CAPTION",
    replacement: (content) => `\n\n${content.trim()}\n\n`,
  });
  service = made;
  return made;
}

/**
 * The markdown of `root`, which it takes over: turndown rewrites the text of the tree it reads, so
 * it copies the node it is handed first; the extractor's tree is read no more, so turndown is
 * handed it as that copy would be, out of its tree (nothing above it is read), and copies nothing.
 */
export function domMarkdown(root: Element): string {
  root.remove();
  const own = root as Element & { cloneNode(deep?: boolean): Node };
  own.cloneNode = () => own;
  return turndown().turndown(own as HTMLElement).trim();
}
