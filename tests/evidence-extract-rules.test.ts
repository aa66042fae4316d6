/**
 * The extractor's rules for pages whose markup misleads a reader by names: an article wrapped in
 * an element named like chrome, an article split in parts named alike, a share bar repeated under
 * each part beside text the article itself repeats, a picture's link read as plain text, and a page
 * where no element holds the article; a sign-off asking to follow the site on a social network, and
 * the rest of an article folded under a block named 'more'.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { extractPage } from "../src/evidence/extract-page.ts";
import { htmlToMarkdown } from "../src/evidence/html-to-markdown.ts";

const prose = (topic: string, n: number) =>
  Array.from(
    { length: n },
    (_, i) =>
      `<p>${topic} paragraph ${
        i + 1
      } says enough about the matter to be read as prose by anyone, ` +
      `with a clause or two more so that it is as long as an article's paragraph usually is.</p>`,
  ).join("\n");

const reply = (i: number) =>
  `<div class="reply-card"><p>Reader ${i} writes a long reply that agrees with the post, and then ` +
  `goes on about a neighbour's garden for a sentence or two more than anyone asked.</p></div>`;

/** Replies with more prose than the article: the article holds less than half the page's. */
const replies = Array.from({ length: 12 }, (_, i) => reply(i)).join("\n");

/** The same replies in a section named as comments. */
const comments = `<section class="discussion-thread">${replies}</section>`;

async function extract(body: string, format: "markdown" | "text" = "markdown") {
  return await extractPage({
    body: `<html><head><title>A page</title></head><body>${body}</body></html>`,
    kind: "html",
    url: new URL("https://site.example/post"),
    format,
    maxChars: 100_000,
  });
}

describe("extractor rules on misleading names", () => {
  it("keeps an article whose wrapper is named like chrome but holds the article's body", async () => {
    const { content } = await extract(
      `<div class="content-with-sidebar"><div class="entry-content">${
        prose("Article", 10)
      }</div></div>${comments}`,
    );
    assert.ok(content.includes("Article paragraph 1 says"), content);
    assert.ok(content.includes("Article paragraph 10 says"), content);
    assert.ok(!content.includes("Reader 0 writes"), content);
  });

  it("reads a blog post's taxonomy classes as topics, not as what the element is", async () => {
    const { content } = await extract(
      `<div class="layout"><article class="post type-post status-publish hentry category-advertising author-jane">${
        prose("Post", 10)
      }</article>${replies}</div>`,
    );
    assert.ok(content.includes("Post paragraph 3 says"), content);
  });

  it("still drops an author box named so on a post", async () => {
    const { content } = await extract(
      `<article class="post hentry">${
        prose("Post", 6)
      }<div class="author-bio"><p>Jane Roe writes about gardens, and has done so for a long time now.</p></div></article>`,
    );
    assert.ok(content.includes("Post paragraph 6 says"), content);
    assert.ok(!content.includes("Jane Roe writes"), content);
  });

  it("takes every part of an article split in parts named alike, not the longest", async () => {
    const parts = [1, 2, 3].map((n) => `<div class="article-body">${prose(`Part ${n}`, 10)}</div>`);
    const { content } = await extract(
      `<div class="story">${parts[0]}<div class="ad-slot">Advertisement</div>${parts[1]}${
        parts[2]
      }</div><aside>${prose("Aside", 1)}</aside>`,
    );
    for (const n of [1, 2, 3]) assert.ok(content.includes(`Part ${n} paragraph 10`), content);
    assert.ok(!content.includes("Aside paragraph"), content);
    assert.ok(!content.includes("Advertisement"), content);
  });

  it("drops a repeated share bar but keeps a line of the article that the page repeats", async () => {
    const bar =
      `<div class="tools"><a href="/s/fb">Facebook</a> <a href="/s/x">X</a> <a href="/s/mail">Email</a></div>`;
    const item = `<p>See it now: <a href="https://shop.example/item">Amazon</a></p>`;
    const { content } = await extract(
      `<div class="entry-content">${prose("One", 3)}${item}${bar}${
        prose("Two", 3)
      }${item}${bar}</div>`,
    );
    assert.equal(content.split("See it now: [Amazon]").length - 1, 2, content);
    assert.ok(!content.includes("Facebook"), content);
  });

  it("leaves no address behind for a picture's link in format text", async () => {
    const { content } = await extract(
      `<div class="entry-content">${
        prose("Deal", 3)
      }<a href="https://r.example/u/abc"><output class="picture-frame"><img src="/a.jpg"></output></a>` +
        `The price dropped to its lowest yet, which is the news of this short paragraph here.${
          prose("More", 2)
        }</div>`,
      "text",
    );
    assert.ok(content.includes("The price dropped to its lowest yet"), content);
    assert.ok(!content.includes("r.example"), content);
    assert.ok(!content.includes("]("), content);
  });

  it("asks Readability when no element holds the article and our pick is the page", () => {
    // Teasers with a summary each hold prose too: the article holds less than half the page's, and
    // the walk down from the body stops at the page's wrapper, which holds long prose, few links.
    const teasers = (n: number) =>
      `<ul>${
        Array.from(
          { length: 6 },
          (_, i) =>
            `<li><a href="/story-${n}-${i}">Story ${n}-${i}</a> is summed up by a teaser in a sentence ` +
            `that is long enough to be prose.</li>`,
        ).join("")
      }</ul>`;
    const html = `<html><body><div id="page"><div>${prose("Story", 7)}</div>${teasers(1)}${
      teasers(2)
    }${teasers(3)}</div></body></html>`;
    const { markdown, by } = htmlToMarkdown(html, new URL("https://site.example/post"));
    assert.equal(by, "readability");
    assert.ok(markdown.includes("Story paragraph 7 says"), markdown);
  });

  it("drops a sign-off asking to follow on a social network, in English and German", async () => {
    const long =
      `<p>The mayor told residents to follow the council on Facebook for road closures, and ` +
      `then spent ten minutes explaining why the bridge would stay shut until spring, what the repairs ` +
      `would cost, and which of the two ferries would run on weekends while the work went on.</p>`;
    const { content } = await extract(
      `<div class="entry-content">${prose("News", 5)}${long}` +
        `<p>Jane Roe's book is out now. Follow her on Twitter @janeroe.</p>` +
        `<p>Folgen Sie uns auf Instagram und Facebook.</p></div>`,
    );
    assert.ok(content.includes("News paragraph 5 says"), content);
    assert.ok(content.includes("follow the council on Facebook"), content);
    assert.ok(!content.includes("Follow her on Twitter"), content);
    assert.ok(!content.includes("Folgen Sie uns"), content);
  });

  it("keeps the rest of an article the page folds under a 'more' block", async () => {
    const { content } = await extract(
      `<div class="entry-content">${prose("Shown", 6)}<div class="read-more-content">${
        prose("Folded", 4)
      }</div></div>`,
    );
    assert.ok(content.includes("Folded paragraph 4 says"), content);
  });
});
