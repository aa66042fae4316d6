/**
 * fetchEvidence against a real site on 127.0.0.1 (opened by allow_private_cidrs) and a real DNS
 * server: the evidence it makes of an article, served markdown and text, redirects and big bodies.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { ARTICLE, type EvidenceSite, sha256, startEvidenceSite } from "./support/evidence-site.ts";

let world: EvidenceSite;
before(async () => {
  world = await startEvidenceSite();
});
after(() => world.close());

describe("a page fetched from a loopback address allow_private_cidrs opens", () => {
  it("comes back as markdown without its navigation, cookie banner or footer", async () => {
    const evidence = await world.fetched(`${world.base}/article`);
    assert.ok("markdown" in evidence);
    const { markdown } = evidence;
    assert.match(markdown, /An evidence bundle keeps the page/);
    for (const chrome of ["SITE-NAVIGATION", "SITE-FOOTER", "COOKIE-BANNER"]) {
      assert.ok(!markdown.includes(chrome), `${chrome} left out`);
    }
    assert.equal(evidence.title, "Evidence test page");
    assert.equal(evidence.route, "extracted");
    assert.equal(evidence.status_code, 200);
    assert.equal(evidence.requested_url, `${world.base}/article`);
    assert.equal(evidence.final_url, `${world.base}/article`);
    assert.equal(evidence.content_type, "text/html; charset=utf-8");
    assert.equal(evidence.bytes, new TextEncoder().encode(ARTICLE).byteLength);
    assert.equal(evidence.source_sha256, sha256(ARTICLE));
    assert.equal(evidence.markdown_sha256, sha256(markdown));
    assert.equal(evidence.truncated, false);
    assert.deepEqual(evidence.robots, { allowed: true, unavailable: false });
    assert.ok(Math.abs(Date.parse(evidence.fetched_at) - Date.now()) < 60_000);
  });

  it("has one anchor per heading, with the lines it spans and their SHA-256", async () => {
    const evidence = await world.fetched(`${world.base}/article`);
    const markdown = (evidence as { markdown: string }).markdown;
    const lines = markdown.split("\n");
    const headings = lines.filter((line) => /^#{1,6} /.test(line));
    assert.equal(evidence.anchors.length, headings.length);
    assert.deepEqual(
      evidence.anchors.map((a) => a.heading),
      ["How evidence is kept", "Anchors", "Line ranges", "Links"],
    );
    for (const anchor of evidence.anchors) {
      assert.match(lines[anchor.line_start - 1] ?? "", new RegExp(`^#+ ${anchor.heading}$`));
      const span = lines.slice(anchor.line_start - 1, anchor.line_end).join("\n");
      assert.equal(anchor.sha256, sha256(span), anchor.id);
    }
    const [, anchors, lineRanges, links] = evidence.anchors;
    assert.equal(anchors?.id, "anchors");
    // "Anchors" spans its subsection "Line ranges" and stops before "Links".
    assert.ok((anchors?.line_end ?? 0) >= (lineRanges?.line_end ?? Infinity));
    assert.ok((anchors?.line_end ?? Infinity) < (links?.line_start ?? 0));
    assert.equal(links?.line_end, lines.length);
  });

  it("makes every link absolute", async () => {
    const evidence = await world.fetched(`${world.base}/article`);
    const urls = evidence.links.map((l) => l.url);
    assert.ok(urls.includes(`${world.base}/spec#hashes`), urls.join());
    assert.ok(urls.includes("https://example.org/rfc"));
    assert.ok(urls.includes(`http://127.0.0.1:${world.port}/other/page.html`));
    assert.ok(!urls.includes(`${world.base}/legal`), "the footer's links are not the article's");
    assert.ok((evidence as { markdown: string }).markdown.includes(`(${world.base}/spec#hashes)`));
    assert.deepEqual(evidence.links.find((l) => l.url.endsWith("/rfc"))?.text, "the RFC");
  });

  it("answers text, without markup, for format text, line for line with the anchors", async () => {
    const evidence = await world.fetched(`${world.base}/article`, { format: "text" });
    assert.ok("text" in evidence && !("markdown" in evidence));
    const lines = evidence.text.split("\n");
    assert.ok(!/[#[\]()]/.test(evidence.text), evidence.text);
    assert.ok(evidence.text.includes("snake_case_name and 2 * 3 * 4 stay whole, emphasis too."));
    assert.equal(evidence.markdown_sha256, sha256(evidence.text));
    assert.equal(evidence.anchors.length, 4);
    for (const anchor of evidence.anchors) {
      assert.equal(lines[anchor.line_start - 1], anchor.heading);
      const span = lines.slice(anchor.line_start - 1, anchor.line_end).join("\n");
      assert.equal(anchor.sha256, sha256(span));
    }
  });

  it("cuts the text at max_chars and says truncated, anchors kept inside the cut", async () => {
    const evidence = await world.fetched(`${world.base}/article`, { max_chars: 200 });
    const markdown = (evidence as { markdown: string }).markdown;
    assert.equal(markdown.length, 200);
    assert.equal(evidence.truncated, true);
    assert.equal(evidence.markdown_sha256, sha256(markdown));
    const lines = markdown.split("\n").length;
    assert.ok(evidence.anchors.length >= 1);
    for (const anchor of evidence.anchors) assert.ok(anchor.line_end <= lines);
  });

  it("asks for markdown first, names the gateway, and keeps the host name in Host", async () => {
    const evidence = await world.fetched(`http://site.test:${world.port}/echo-accept`);
    const [accept, agent, host] = (evidence as { markdown: string }).markdown.split("\n");
    assert.match(accept ?? "", /^text\/markdown, text\/html;q=0\.9/);
    assert.match(agent ?? "", /^TraceFetch-Edge\//);
    assert.equal(host, `site.test:${world.port}`);
    assert.equal(evidence.route, "text_served");
  });

  it("uses served markdown as served (markdown_served), its links absolute", async () => {
    const evidence = await world.fetched(`${world.base}/served.md`);
    const served = "# Served\n\nAs [served](/x).\n\n## Part\n\nText.\n";
    assert.equal((evidence as { markdown: string }).markdown, served);
    assert.equal(evidence.route, "markdown_served");
    assert.equal(evidence.title, "Served");
    assert.deepEqual(evidence.links, [{ url: `${world.base}/x`, text: "served" }]);
    assert.deepEqual(evidence.anchors.map((a) => [a.id, a.level, a.line_start]), [
      ["served", 1, 1],
      ["part", 2, 5],
    ]);
  });

  it("uses plain text as served, with no anchors", async () => {
    const evidence = await world.fetched(`${world.base}/plain`);
    assert.equal(evidence.route, "text_served");
    assert.deepEqual(evidence.anchors, []);
  });

  it("hashes the body decoded from its content encoding", async () => {
    const evidence = await world.fetched(`${world.base}/gzip`);
    assert.equal(evidence.source_sha256, sha256("decoded body\n"));
    assert.equal(evidence.bytes, 13);
  });

  it("follows a relative redirect and reports the final URL", async () => {
    const evidence = await world.fetched(`${world.base}/moved`);
    assert.equal(evidence.requested_url, `${world.base}/moved`);
    assert.equal(evidence.final_url, `${world.base}/article`);
  });

  it("cuts a body over 5,000,000 bytes there and says truncated, not failed", async () => {
    const evidence = await world.fetched(`${world.base}/huge`, { max_chars: 10 });
    assert.equal(evidence.bytes, 5_000_000);
    assert.equal(evidence.truncated, true);
  });
});
