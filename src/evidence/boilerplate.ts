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
 * A container whose class, id or `itemprop` names it the article's body is taken when it holds at
 * least this share of the prose: the name is better evidence than our measures, and the rest of
 * the prose is then teasers and comments (a listing's cards each hold far less). An element that
 * holds such a container is never chrome, whatever its own name says (`entry author-jane`,
 * `content-with-sidebar`, `widget Blog`, a form around the whole page).
 */
export const BODY_NAMED_SHARE = 0.3;

/**
 * Class or id of an article's body: `article-body`, `storyContent`, `entry-content`, `post_text`,
 * and Drupal's body field (`field-name-body`, `field--name-body`).
 */
const ARTICLE_NAME =
  /(?:^|[\s_-])(?:article|story|post|entry|blog|news|main|page)[\s_-]?(?:body|content|text)(?:$|[\s_-])|(?:^|[\s_-])(?:articleBody|storyBody|postBody|entryContent|articleContent|storyContent|postContent|bodyText|articleText)(?:$|[\s_-])|(?:^|\s)field--?name-body(?:$|\s)/i;

/** Whether an element's `itemprop`, class or id names it the article's body. */
export function namesArticleBody(element: Element): boolean {
  if (element.getAttribute("itemprop") === "articleBody") return true;
  return ARTICLE_NAME.test(
    `${element.getAttribute("class") ?? ""} ${element.getAttribute("id") ?? ""}`,
  );
}

/** An `<article>`, `<main>` or `role="main"`: a container its tag names the page's content. */
export function tagNamesContent(element: Element): boolean {
  return element.tagName === "ARTICLE" || element.tagName === "MAIN" ||
    element.getAttribute("role") === "main";
}

/** An article body by its name, or by its tag. */
function namesContent(element: Element): boolean {
  return tagNamesContent(element) || namesArticleBody(element);
}

/**
 * A named element holding more than this share of the page's prose is the content itself,
 * whatever its name: the chrome a name points at (a share bar, a cookie notice, a related list)
 * never holds half of an article.
 */
export const KEEP_NAMED_SHARE = 0.5;

/**
 * Classes a blog engine puts on a post's wrapper to name its taxonomy (WordPress marks the wrapper
 * `hentry` or `status-publish` and adds `category-<slug>`, `tag-<slug>`, `author-<slug>`): their
 * words are the post's topics and author (`category-advertising`, `author-jane`), not what the
 * element is.
 */
const POST_MARKS = /(?:^|\s)(?:hentry|status-publish)(?:\s|$)/;
const TAXONOMY_CLASS = /(?:^|\s)(?:category|tag|author)-\S*/g;

/** The words of an element's class and id, lower-cased, camelCase cut apart. */
export function nameWords(element: Element): string[] {
  // The class as written: linkedom answers getAttribute("class") from a token list it builds for
  // the element and joins again on each call; its tokens are these words, without repeats.
  let classes = element.getAttributeNode("class")?.value ?? "";
  if (POST_MARKS.test(classes)) classes = classes.replace(TAXONOMY_CLASS, " ");
  const name = `${classes} ${element.getAttribute("id") ?? ""}`;
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
 * KEEP_NAMED_SHARE of the prose measured in `stats`, or of the article body they are in, and those
 * that hold the content (a named body, an `<article>`, a `<main>` with BODY_NAMED_SHARE of it);
 * returns what it removed (for remeasure).
 */
export function dropChrome(root: Element, stats: ReadonlyMap<Element, Stats>): Removal[] {
  const total = stats.get(root)?.mass ?? 0;
  const bodies: Element[] = [];
  for (const [element, { mass }] of stats) {
    if (element !== root && mass > 0 && mass >= BODY_NAMED_SHARE * total && namesContent(element)) {
      bodies.push(element);
    }
  }
  const doomed: Removal[] = [];
  // `scope`: the prose of the innermost article body around (the root's, outside any): a wrapper
  // named `widget` inside the body, holding most of it, is the body's own markup.
  const visit = (element: Element, scope: number) => {
    for (let child = element.firstElementChild; child !== null; child = child.nextElementSibling) {
      const mass = stats.get(child)?.mass ?? 0;
      if (isChrome(child) && !holdsContent(child, mass, scope)) {
        doomed.push({ element: child, from: element });
      } else {
        const body = mass >= BODY_NAMED_SHARE * total && namesArticleBody(child);
        visit(child, body ? mass : scope);
      }
    }
  };
  // A hidden element is kept only by the page's measure: one holding an article body is a copy the
  // page keeps for later (a print or modal view of the same text), not the text it shows.
  const holdsContent = (element: Element, mass: number, scope: number) =>
    mass > KEEP_NAMED_SHARE * total ||
    !hidden(element) &&
      (mass > KEEP_NAMED_SHARE * scope || bodies.some((body) => element.contains(body)));
  visit(root, total);
  for (const { element } of doomed) element.remove();
  return doomed;
}
