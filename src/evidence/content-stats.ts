/// <reference lib="dom" />
/**
 * The measures the main-content heuristics read, taken in one walk over a linkedom tree: for each
 * element its text and link-text lengths, and its paragraph mass, the characters of prose inside it
 * (runs of inline text long enough to be a sentence, not mostly links), weighed down by their links.
 */

/** Elements that flow inside a paragraph: their text belongs to the block around them. */
export const INLINE = new Set([
  "A",
  "ABBR",
  "B",
  "BDI",
  "BDO",
  "BR",
  "CITE",
  "CODE",
  "DATA",
  "DEL",
  "DFN",
  "EM",
  "FONT",
  "I",
  "IMG",
  "INS",
  "KBD",
  "LABEL",
  "MARK",
  "Q",
  "S",
  "SAMP",
  "SMALL",
  "SPAN",
  "STRONG",
  "SUB",
  "SUP",
  "TIME",
  "U",
  "VAR",
  "WBR",
]);

/**
 * A run of inline text shorter than this is a label, a menu entry or a date, not prose: a short
 * sentence of the benchmark's articles is about 40 characters; 25 keeps one-line paragraphs of
 * terse languages (Chinese says in 25 characters what English says in 70).
 */
export const MIN_PARAGRAPH_CHARS = 25;

/**
 * A run whose link text is more than this share of its text is navigation, not prose: a paragraph
 * of an article cites a few links; a teaser ("Read more: ...") is all link.
 */
export const MAX_PARAGRAPH_LINK_SHARE = 0.5;

export type Stats = {
  /** Characters of text inside, white space runs counted as one. */
  text: number;
  /** Of those, the characters inside links. */
  links: number;
  /** Characters of prose inside, each run weighed by its share of text outside links. */
  mass: number;
  /** Runs of prose inside. */
  paragraphs: number;
};

const EMPTY: Stats = { text: 0, links: 0, mass: 0, paragraphs: 0 };

/** Length of text with its white space runs counted as one character, ends not counted. */
export function textLength(text: string): number {
  let n = 0;
  let space = true;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const isSpace = c === 32 || c === 10 || c === 9 || c === 13 || c === 12 || c === 160;
    if (isSpace) {
      if (!space) n++;
      space = true;
    } else {
      n++;
      space = false;
    }
  }
  return space && n > 0 ? n - 1 : n;
}

/** The stats of every element under `root` (itself included), in one post-order walk. */
export function measure(root: Element): Map<Element, Stats> {
  const all = new Map<Element, Stats>();
  walk(root, all, null);
  return all;
}

/** An element taken out of a measured tree, and the element it was taken from. */
export type Removal = { element: Element; from: Element };

/**
 * Brings `all`, measure(root) of a tree, up to date once `removals` were taken out of it, as
 * measure(root) would measure it anew: the removed elements' entries go, and only the elements
 * that held them and their ancestors are walked again, each reusing its other children's stats.
 * The entries keep measure's post-order (a removal takes entries out, never reorders the others).
 */
export function remeasure(root: Element, all: Map<Element, Stats>, removals: readonly Removal[]) {
  if (removals.length === 0) return;
  const changed = new Set<Element>();
  for (const { element, from } of removals) {
    forget(element, all);
    for (let at: Element | null = from; at !== null && !changed.has(at); at = at.parentElement) {
      changed.add(at);
      if (at === root) break;
    }
  }
  walk(root, all, changed);
}

function forget(element: Element, all: Map<Element, Stats>) {
  all.delete(element);
  for (let child = element.firstElementChild; child !== null; child = child.nextElementSibling) {
    forget(child, all);
  }
}

/** Measures `element`; with `changed`, a block child not in it keeps its stats from `all`. */
function walk(element: Element, all: Map<Element, Stats>, changed: Set<Element> | null): Stats {
  const stats: Stats = { text: 0, links: 0, mass: 0, paragraphs: 0 };
  let runText = 0;
  let runLinks = 0;
  const close = () => {
    if (runText >= MIN_PARAGRAPH_CHARS && runLinks / runText <= MAX_PARAGRAPH_LINK_SHARE) {
      stats.mass += runText - runLinks;
      stats.paragraphs++;
    }
    runText = 0;
    runLinks = 0;
  };
  for (let node = element.firstChild; node !== null; node = node.nextSibling) {
    if (node.nodeType === 3) {
      const n = textLength(node.nodeValue ?? "");
      stats.text += n;
      runText += n;
      continue;
    }
    if (node.nodeType !== 1) continue;
    const child = node as Element;
    if (INLINE.has(child.tagName)) {
      const inner = inlineStats(child);
      stats.text += inner.text;
      stats.links += inner.links;
      runText += inner.text;
      runLinks += inner.links;
      if (child.tagName === "BR" && runText >= MIN_PARAGRAPH_CHARS * 4) close();
      continue;
    }
    close();
    const kept = changed === null || changed.has(child) ? undefined : all.get(child);
    const inner = kept ?? walk(child, all, changed);
    stats.text += inner.text;
    stats.links += inner.links;
    stats.mass += inner.mass;
    stats.paragraphs += inner.paragraphs;
  }
  close();
  all.set(element, stats);
  return stats;
}

/** Text and link text of an inline element (blocks inside it are read as its text). */
function inlineStats(element: Element): Stats {
  const text = textLength(element.textContent ?? "");
  return { ...EMPTY, text, links: element.tagName === "A" ? text : linkText(element) };
}

/** Characters of the links inside `element`, by a walk (a selector is parsed anew on each call). */
function linkText(element: Element): number {
  let n = 0;
  for (let child = element.firstElementChild; child !== null; child = child.nextElementSibling) {
    n += child.tagName === "A" ? textLength(child.textContent ?? "") : linkText(child);
  }
  return n;
}

/** Whether an element named `tag` (upper case) is inside `element`, by a walk. */
export function holds(element: Element, tag: string): boolean {
  for (let child = element.firstElementChild; child !== null; child = child.nextElementSibling) {
    if (child.tagName === tag || holds(child, tag)) return true;
  }
  return false;
}

/** Share of an element's text inside links (0 for an empty element). */
export function linkShare(stats: Stats): number {
  return stats.text === 0 ? 0 : stats.links / stats.text;
}
