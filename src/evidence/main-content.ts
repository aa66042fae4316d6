/// <reference lib="dom" />
/**
 * Our own main-content heuristics over a linkedom tree: chrome dropped by name (boilerplate.ts),
 * then the element that holds the page's prose. A container the page names as its article body
 * (`itemprop="articleBody"`, a class like `entry-content`) or as its article (`<article>`,
 * `<main>`) is taken when it holds its share of the prose; otherwise the walk goes down from the
 * body into the child holding the most prose while that child holds COVER_SHARE of it, and stops
 * at the body itself (the baseline) when no child does.
 */
import { BODY_NAMED_SHARE, dropChrome, namesArticleBody, tagNamesContent } from "./boilerplate.ts";
import { measure, remeasure, type Stats } from "./content-stats.ts";

/**
 * The share of the page's prose the chosen element must hold: a majority, so that of siblings at
 * most one qualifies. Higher, and the comments and teasers around an article come with it (0.75
 * and 0.9 scored lower on the tuning half of the extraction benchmark; 0.4 to 0.6 the same).
 */
export const COVER_SHARE = 0.5;

/**
 * An `<article>`, `<main>` or `role="main"` is taken when it holds at least this share: those tags
 * also wrap teasers, and `main` often wraps sidebars too, so they must hold most of the prose.
 */
export const TAG_NAMED_SHARE = 0.6;

/**
 * Of two nested named containers, the inner one is taken when it holds at least this share of the
 * outer one's prose: the article's text without the byline and share bar around it.
 */
export const INNER_NAMED_SHARE = 0.8;

export type Candidate = {
  root: Element;
  stats: Map<Element, Stats>;
  by: "named" | "cover";
};

/** The share of prose a named container must hold, or null for an element not named so. */
function namedShare(element: Element): number | null {
  if (namesArticleBody(element)) return BODY_NAMED_SHARE;
  return tagNamesContent(element) ? TAG_NAMED_SHARE : null;
}

/** The main content of a page's body (which it changes: chrome is removed in place). */
export function mainContent(body: Element): Candidate {
  const stats = measure(body);
  remeasure(body, stats, dropChrome(body, stats));
  const total = stats.get(body)?.mass ?? 0;
  if (total === 0) return { root: body, stats, by: "cover" };
  // The least share namedShare asks for: an element under it is not read for its name.
  const least = Math.min(BODY_NAMED_SHARE, TAG_NAMED_SHARE) * total;
  const named = [...stats.keys()]
    .map((element) => ({ element, mass: stats.get(element)?.mass ?? 0 }))
    .filter(({ element, mass }) =>
      element !== body && mass >= least && mass >= (namedShare(element) ?? Infinity) * total
    )
    .sort((a, b) => b.mass - a.mass);
  const outer = named[0];
  if (outer !== undefined) {
    const inner = named.filter(({ element, mass }) =>
      mass >= INNER_NAMED_SHARE * outer.mass && outer.element.contains(element)
    ).at(-1) ?? outer;
    return { root: joinedParts(inner.element, stats), stats, by: "named" };
  }
  let current = body;
  for (;;) {
    let next: Element | null = null;
    let nextMass = 0;
    for (let child = current.firstElementChild; child !== null; child = child.nextElementSibling) {
      const mass = stats.get(child)?.mass ?? 0;
      if (mass > nextMass) {
        next = child;
        nextMass = mass;
      }
    }
    if (next === null || nextMass < COVER_SHARE * total) break;
    current = next;
  }
  return { root: current, stats, by: "cover" };
}

/**
 * The named container, or its parent when the page split the article into parts named alike (a
 * class on each paragraph, a body cut in two around an advertisement): a sibling with the same
 * class that holds prose is another part of the same text.
 */
function joinedParts(element: Element, stats: ReadonlyMap<Element, Stats>): Element {
  const name = element.getAttribute("class")?.trim() ?? "";
  const parent = element.parentElement;
  if (name === "" || parent === null) return element;
  for (
    let sibling = parent.firstElementChild;
    sibling !== null;
    sibling = sibling.nextElementSibling
  ) {
    if (sibling === element || sibling.getAttribute("class")?.trim() !== name) continue;
    if ((stats.get(sibling)?.mass ?? 0) > 0) return parent;
  }
  return element;
}
