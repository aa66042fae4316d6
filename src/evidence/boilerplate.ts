/// <reference lib="dom" />
/**
 * What is never a page's main text, found by what the page calls it: elements by tag (navigation,
 * forms, asides), by role, by the words of their class and id (cookie notices, share bars, related
 * lists, comments), and hidden elements. A named element that holds most of the page's prose is
 * kept: a page's body called `has-sidebar` or `with-comments` is still the page.
 */
import type { Removal, Stats } from "./content-stats.ts";

/** Elements that hold no main text wherever they are. */
const DROPPED_TAGS = new Set([
  "NAV",
  "ASIDE",
  "FOOTER",
  "FORM",
  "BUTTON",
  "SELECT",
  "INPUT",
  "TEXTAREA",
  "FIGCAPTION",
  "DIALOG",
  "MENU",
  "NOSCRIPT",
  "IFRAME",
  "OBJECT",
  "EMBED",
  "CANVAS",
  "VIDEO",
  "AUDIO",
  "MAP",
]);

/** ARIA roles of page chrome (WAI-ARIA landmark and widget roles). */
const DROPPED_ROLES = new Set([
  "navigation",
  "complementary",
  "contentinfo",
  "banner",
  "search",
  "dialog",
  "alertdialog",
  "menu",
  "menubar",
  "toolbar",
  "tablist",
]);

/**
 * Words of a class or id that name chrome, in the languages of class names (English, mostly):
 * each word is matched whole, after the name is cut at `-`, `_`, spaces and camelCase humps, so
 * `lead` never matches `ad` and `relatedArticles` matches `related`.
 */
const CHROME_WORDS = new Set([
  "ad",
  "ads",
  "adslot",
  "advert",
  "advertisement",
  "advertising",
  "author",
  "banner",
  "bio",
  "breadcrumb",
  "breadcrumbs",
  "byline",
  "caption",
  "carousel",
  "comment",
  "comments",
  "consent",
  "cookie",
  "cookies",
  "copyright",
  "credit",
  "credits",
  "cta",
  "date",
  "dateline",
  "discussion",
  "disqus",
  "footer",
  "gallery",
  "gdpr",
  "latest",
  "lightbox",
  "masthead",
  "menu",
  "modal",
  "more",
  "nav",
  "navbar",
  "navigation",
  "newsletter",
  "nocontent",
  "noscript",
  "outbrain",
  "pager",
  "pagination",
  "popular",
  "popup",
  "print",
  "promo",
  "promotion",
  "rail",
  "ranking",
  "recirc",
  "recommended",
  "related",
  "replies",
  "respond",
  "share",
  "sharing",
  "sidebar",
  "signature",
  "skip",
  "slideshow",
  "social",
  "sponsor",
  "sponsored",
  "subscribe",
  "subscription",
  "taboola",
  "tags",
  "timestamp",
  "toolbar",
  "trending",
  "widget",
]);

/**
 * A named element holding more than this share of the page's prose is the content itself,
 * whatever its name: the chrome a name points at (a share bar, a cookie notice, a related list)
 * never holds half of an article.
 */
export const KEEP_NAMED_SHARE = 0.5;

/** The words of an element's class and id, lower-cased, camelCase cut apart. */
export function nameWords(element: Element): string[] {
  // The class as written: linkedom answers getAttribute("class") from a token list it builds for
  // the element and joins again on each call; its tokens are these words, without repeats.
  const name = `${element.getAttributeNode("class")?.value ?? ""} ${
    element.getAttribute("id") ?? ""
  }`;
  if (name.trim() === "") return [];
  return name.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase().split(/[^a-z0-9]+/);
}

function hidden(element: Element): boolean {
  if (element.hasAttribute("hidden") || element.getAttribute("aria-hidden") === "true") {
    return true;
  }
  const style = element.getAttribute("style");
  return style !== null && /display\s*:\s*none|visibility\s*:\s*hidden/i.test(style);
}

/** Whether an element is chrome by its tag, role, name or visibility (never `body` or `html`). */
export function isChrome(element: Element): boolean {
  if (DROPPED_TAGS.has(element.tagName)) return true;
  if (element.tagName === "BODY" || element.tagName === "HTML") return false;
  const role = element.getAttribute("role");
  if (role !== null && DROPPED_ROLES.has(role.trim().toLowerCase())) return true;
  if (hidden(element)) return true;
  const words = nameWords(element);
  // A post embedded from a social network is quoted text of the article, whatever else its name
  // says ("social-media-embed").
  if (words.includes("embed")) return false;
  return words.some((word) => CHROME_WORDS.has(word));
}

/**
 * Removes the chrome under `root` (root itself never), keeping named elements that hold more than
 * KEEP_NAMED_SHARE of the prose measured in `stats`; returns what it removed (for remeasure).
 */
export function dropChrome(root: Element, stats: ReadonlyMap<Element, Stats>): Removal[] {
  const total = stats.get(root)?.mass ?? 0;
  const doomed: Removal[] = [];
  const visit = (element: Element) => {
    for (let child = element.firstElementChild; child !== null; child = child.nextElementSibling) {
      if (isChrome(child) && !holdsContent(child, stats, total)) {
        doomed.push({ element: child, from: element });
      } else visit(child);
    }
  };
  visit(root);
  for (const { element } of doomed) element.remove();
  return doomed;
}

function holdsContent(element: Element, stats: ReadonlyMap<Element, Stats>, total: number) {
  return total > 0 && (stats.get(element)?.mass ?? 0) > KEEP_NAMED_SHARE * total;
}
