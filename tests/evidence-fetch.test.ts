/**
 * fetchEvidence against a real site on 127.0.0.1 (opened by allow_private_cidrs) and a real DNS
 * server: the evidence it makes, robots.txt, redirects, bodies, content types and failures.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { gzipSync } from "node:zlib";
import { type Evidence, fetchEvidence, fetchPolicyOf } from "../src/evidence/mod.ts";
import { nodeFetchParts } from "../src/runtime/node-evidence.ts";
import { readSettings } from "../src/gateway/settings.ts";
import { parseCidr } from "../src/io/ip-rules.ts";
import {
  fetchDeps,
  listen,
  type Listener,
  policy,
  request,
  type Route,
  startDns,
} from "./support/fetch-fixture.ts";

const sha256 = (text: string | Uint8Array) => createHash("sha256").update(text).digest("hex");

const ARTICLE = `<!doctype html>
<html><head><title>Evidence test page</title></head>
<body>
<nav class="site-nav"><a href="/">Home</a> <a href="/about">About</a> <span>SITE-NAVIGATION</span></nav>
<div class="cookie-banner">COOKIE-BANNER we use cookies <button>Accept</button></div>
<main><article>
<h1>How evidence is kept</h1>
<p>An evidence bundle keeps the page as it was fetched, with a hash of its body and of the text
made from it, so that a quote can be checked later against the same bytes. See the
<a href="/spec#hashes">hashing rules</a> and <a href="https://example.org/rfc">the RFC</a>.</p>
<h2>Anchors</h2>
<p>Every heading of the page becomes an anchor with the lines it spans in the returned markdown, so
a citation can name a section and a reader can find the very lines it came from.</p>
<h3>Line ranges</h3>
<p>Line numbers start at one and cover the heading and its section up to the next heading of the
same or a higher level; the SHA-256 of those lines is kept beside them.</p>
<h2>Links</h2>
<p>Links are absolute, so a relative <a href="../other/page.html">link</a> still leads somewhere
when the text is read away from the page; at most two hundred are listed.</p>
</article></main>
<footer class="site-footer">SITE-FOOTER all rights reserved <a href="/legal">Legal</a></footer>
</body></html>`;

/** 20,000,000 zero bytes, gzipped to about 20 KB. */
const bomb = gzipSync(new Uint8Array(20_000_000), { level: 9 });

let site: Listener;
let S: number;
let base: string;
let dns: Awaited<ReturnType<typeof startDns>>;
const open = policy({ allow_private_cidrs: ["127.0.0.1/32"] });

const text = (type: string, body: string | Uint8Array, status = 200): Route => (_req, res) => {
  res.writeHead(status, { "content-type": type });
  res.end(body);
};

before(async () => {
  site = await listen("127.0.0.1", 0, {
    "/robots.txt": text(
      "text/plain",
      "User-agent: *\nDisallow: /everyone-else\n\nUser-agent: TraceFetch-Edge\nDisallow: /private\nDisallow: /no-gateway\n",
    ),
    "/article": text("text/html; charset=utf-8", ARTICLE),
    "/served.md": text(
      "text/markdown; charset=utf-8",
      "# Served\n\nAs [served](/x).\n\n## Part\n\nText.\n",
    ),
    "/plain": text("text/plain", "just text\n# not a heading\n"),
    "/json": text("application/json", '{"a":1}'),
    "/png": text("image/png", new Uint8Array([0x89, 0x50, 0x4e, 0x47])),
    "/private": text("text/plain", "secret"),
    "/no-gateway": text("text/plain", "not for the gateway"),
    "/everyone-else": text("text/plain", "for the gateway only"),
    "/fails": text("text/plain", "down", 503),
    "/gone": text("text/plain", "gone", 404),
    "/moved": (_req, res) => {
      res.writeHead(301, { location: "article" });
      res.end();
    },
    "/to-private": (_req, res) => {
      res.writeHead(302, { location: "/private" });
      res.end();
    },
    "/gzip": (_req, res) => {
      res.writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" });
      res.end(gzipSync("decoded body\n"));
    },
    "/huge": (_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      const chunk = "x".repeat(100_000) + "\n";
      let sent = 0;
      const write = () => {
        while (sent < 60) {
          sent++;
          if (!res.write(chunk)) return void res.once("drain", write);
        }
        res.end();
      };
      write();
    },
    "/bomb": (_req, res) => {
      res.writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" });
      res.end(bomb);
    },
    "/never-ends": (_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("a beginning, and then nothing more\n");
    },
    "/echo-accept": (req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end(`${req.headers.accept}\n${req.headers["user-agent"]}\n${req.headers.host}`);
    },
  });
  S = site.port;
  base = `http://127.0.0.1:${S}`;
  dns = await startDns({
    "site.test": { a: ["127.0.0.1"] },
    "denied.site.test": { a: ["127.0.0.1"] },
  });
});

after(async () => {
  await Promise.all([site.close(), dns.close()]);
});

async function fetched(url: string, extra: Parameters<typeof request>[1] = {}, p = open) {
  const { deps } = fetchDeps(dns.server);
  const outcome = await fetchEvidence(request(url, extra), p, deps);
  assert.equal(outcome.outcome, "fetched", JSON.stringify(outcome));
  return (outcome as { evidence: Evidence }).evidence;
}

const asked = (path: string) => site.requests.filter((r) => r.path === path).length;

describe("a page fetched from a loopback address allow_private_cidrs opens", () => {
  it("comes back as markdown without its navigation, cookie banner or footer", async () => {
    const evidence = await fetched(`${base}/article`);
    assert.ok("markdown" in evidence);
    const { markdown } = evidence;
    assert.match(markdown, /An evidence bundle keeps the page/);
    for (const chrome of ["SITE-NAVIGATION", "SITE-FOOTER", "COOKIE-BANNER"]) {
      assert.ok(!markdown.includes(chrome), `${chrome} left out`);
    }
    assert.equal(evidence.title, "Evidence test page");
    assert.equal(evidence.route, "extracted");
    assert.equal(evidence.status_code, 200);
    assert.equal(evidence.requested_url, `${base}/article`);
    assert.equal(evidence.final_url, `${base}/article`);
    assert.equal(evidence.content_type, "text/html; charset=utf-8");
    assert.equal(evidence.bytes, new TextEncoder().encode(ARTICLE).byteLength);
    assert.equal(evidence.source_sha256, sha256(ARTICLE));
    assert.equal(evidence.markdown_sha256, sha256(markdown));
    assert.equal(evidence.truncated, false);
    assert.deepEqual(evidence.robots, { allowed: true, unavailable: false });
    assert.ok(Math.abs(Date.parse(evidence.fetched_at) - Date.now()) < 60_000);
  });

  it("has one anchor per heading, with the lines it spans and their SHA-256", async () => {
    const evidence = await fetched(`${base}/article`);
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
    const evidence = await fetched(`${base}/article`);
    const urls = evidence.links.map((l) => l.url);
    assert.ok(urls.includes(`${base}/spec#hashes`), urls.join());
    assert.ok(urls.includes("https://example.org/rfc"));
    assert.ok(urls.includes(`http://127.0.0.1:${S}/other/page.html`));
    assert.ok(!urls.includes(`${base}/legal`), "the footer's links are not the article's");
    assert.ok((evidence as { markdown: string }).markdown.includes(`(${base}/spec#hashes)`));
    assert.deepEqual(evidence.links.find((l) => l.url.endsWith("/rfc"))?.text, "the RFC");
  });

  it("answers text, without markup, for format text, line for line with the anchors", async () => {
    const evidence = await fetched(`${base}/article`, { format: "text" });
    assert.ok("text" in evidence && !("markdown" in evidence));
    const lines = evidence.text.split("\n");
    assert.ok(!/[#[\]()]/.test(evidence.text), evidence.text);
    assert.equal(evidence.markdown_sha256, sha256(evidence.text));
    assert.equal(evidence.anchors.length, 4);
    for (const anchor of evidence.anchors) {
      assert.equal(lines[anchor.line_start - 1], anchor.heading);
      const span = lines.slice(anchor.line_start - 1, anchor.line_end).join("\n");
      assert.equal(anchor.sha256, sha256(span));
    }
  });

  it("cuts the text at max_chars and says truncated, anchors kept inside the cut", async () => {
    const evidence = await fetched(`${base}/article`, { max_chars: 200 });
    const markdown = (evidence as { markdown: string }).markdown;
    assert.equal(markdown.length, 200);
    assert.equal(evidence.truncated, true);
    assert.equal(evidence.markdown_sha256, sha256(markdown));
    const lines = markdown.split("\n").length;
    assert.ok(evidence.anchors.length >= 1);
    for (const anchor of evidence.anchors) assert.ok(anchor.line_end <= lines);
  });

  it("asks for markdown first, names the gateway, and keeps the host name in Host", async () => {
    const evidence = await fetched(`http://site.test:${S}/echo-accept`);
    const [accept, agent, host] = (evidence as { markdown: string }).markdown.split("\n");
    assert.match(accept ?? "", /^text\/markdown, text\/html;q=0\.9/);
    assert.match(agent ?? "", /^TraceFetch-Edge\//);
    assert.equal(host, `site.test:${S}`);
    assert.equal(evidence.route, "text_served");
  });

  it("uses served markdown as served (markdown_served), its links absolute", async () => {
    const evidence = await fetched(`${base}/served.md`);
    const served = "# Served\n\nAs [served](/x).\n\n## Part\n\nText.\n";
    assert.equal((evidence as { markdown: string }).markdown, served);
    assert.equal(evidence.route, "markdown_served");
    assert.equal(evidence.title, "Served");
    assert.deepEqual(evidence.links, [{ url: `${base}/x`, text: "served" }]);
    assert.deepEqual(evidence.anchors.map((a) => [a.id, a.level, a.line_start]), [
      ["served", 1, 1],
      ["part", 2, 5],
    ]);
  });

  it("uses plain text as served, with no anchors", async () => {
    const evidence = await fetched(`${base}/plain`);
    assert.equal(evidence.route, "text_served");
    assert.deepEqual(evidence.anchors, []);
  });

  it("hashes the body decoded from its content encoding", async () => {
    const evidence = await fetched(`${base}/gzip`);
    assert.equal(evidence.source_sha256, sha256("decoded body\n"));
    assert.equal(evidence.bytes, 13);
  });

  it("follows a relative redirect and reports the final URL", async () => {
    const evidence = await fetched(`${base}/moved`);
    assert.equal(evidence.requested_url, `${base}/moved`);
    assert.equal(evidence.final_url, `${base}/article`);
  });

  it("cuts a body over 5,000,000 bytes there and says truncated, not failed", async () => {
    const evidence = await fetched(`${base}/huge`, { max_chars: 10 });
    assert.equal(evidence.bytes, 5_000_000);
    assert.equal(evidence.truncated, true);
  });
});

describe("robots.txt", () => {
  it("never requests a page robots.txt disallows", async () => {
    const { deps } = fetchDeps(dns.server);
    for (const path of ["/private", "/no-gateway"]) {
      const outcome = await fetchEvidence(request(`${base}${path}`), open, deps);
      assert.equal(outcome.outcome === "refused" && outcome.code, "robots_disallowed", path);
      assert.equal(asked(path), 0, `${path} was never requested`);
    }
  });

  it("reads the gateway's own group alone when robots.txt has one (RFC 9309 section 2.2.1)", async () => {
    const evidence = await fetched(`${base}/everyone-else`);
    assert.equal(evidence.route, "text_served");
  });

  it("never requests a disallowed page a redirect leads to", async () => {
    const { deps } = fetchDeps(dns.server);
    const outcome = await fetchEvidence(request(`${base}/to-private`), open, deps);
    assert.equal(outcome.outcome === "refused" && outcome.code, "robots_disallowed");
    assert.equal(asked("/private"), 0);
  });

  it("asks an origin's robots.txt once for many pages", async () => {
    const { deps } = fetchDeps(dns.server);
    const before = asked("/robots.txt");
    await fetchEvidence(request(`${base}/plain`), open, deps);
    await fetchEvidence(request(`${base}/served.md`), open, deps);
    assert.equal(asked("/robots.txt") - before, 1);
  });

  it("allows every page when robots.txt is 4xx (unavailable), and disallows all on 5xx", async () => {
    const answers: Record<string, number> = { "/robots.txt": 404 };
    const other = await listen("127.0.0.1", 0, {
      "/robots.txt": (_req, res) => {
        res.writeHead(answers["/robots.txt"] ?? 404);
        res.end();
      },
      "/page": text("text/plain", "page"),
    });
    try {
      const at = `http://127.0.0.1:${other.port}/page`;
      const first = fetchDeps(dns.server);
      const allowed = await fetchEvidence(request(at), open, first.deps);
      assert.equal(allowed.outcome, "fetched");
      assert.deepEqual((allowed as { evidence: Evidence }).evidence.robots, {
        allowed: true,
        unavailable: true,
      });
      answers["/robots.txt"] = 503;
      const second = fetchDeps(dns.server);
      const refused = await fetchEvidence(request(at), open, second.deps);
      assert.equal(refused.outcome === "refused" && refused.code, "robots_disallowed");
      assert.equal(other.requests.filter((r) => r.path === "/page").length, 1);
    } finally {
      await other.close();
    }
  });
});

describe("failures and refusals", () => {
  it("answers fetch_disabled without a policy, and sends nothing", async () => {
    const { deps, guard } = fetchDeps(dns.server);
    const outcome = await fetchEvidence(request(`${base}/plain`), null, deps);
    assert.equal(outcome.outcome === "refused" && outcome.code, "fetch_disabled");
    assert.deepEqual(guard.sent, []);
  });

  it("refuses content types other than HTML, XHTML, text and markdown", async () => {
    const { deps } = fetchDeps(dns.server);
    for (const path of ["/json", "/png"]) {
      const outcome = await fetchEvidence(request(`${base}${path}`), open, deps);
      assert.equal(outcome.outcome === "refused" && outcome.code, "unsupported_content_type");
    }
  });

  it("answers fetch_failed, retryable, with the status of a 5xx; not retryable for a 404", async () => {
    const { deps } = fetchDeps(dns.server);
    const down = await fetchEvidence(request(`${base}/fails`), open, deps);
    assert.deepEqual(
      down.outcome === "failed" && [down.code, down.status_code, down.retryable],
      ["fetch_failed", 503, true],
    );
    const gone = await fetchEvidence(request(`${base}/gone`), open, deps);
    assert.deepEqual(gone.outcome === "failed" && [gone.status_code, gone.retryable], [404, false]);
  });

  it("cuts a body that never ends at the fetch's timeout", async () => {
    const { deps } = fetchDeps(dns.server);
    const started = Date.now();
    const outcome = await fetchEvidence(
      request(`${base}/never-ends`, { timeout_ms: 500 }),
      open,
      deps,
    );
    assert.deepEqual(
      outcome.outcome === "failed" && [outcome.reason, outcome.retryable],
      ["timeout", true],
    );
    assert.ok(Date.now() - started < 4_000, "ended near its timeout");
  });

  it("reads a gzip bomb's decoded body only to 5,000,000 bytes", async () => {
    const evidence = await fetched(`${base}/bomb`, { max_chars: 10 });
    assert.equal(evidence.bytes, 5_000_000);
    assert.equal(evidence.truncated, true);
  });

  it("answers cancelled, not retryable, when the caller goes away mid-body", async () => {
    const controller = new AbortController();
    const { deps } = fetchDeps(dns.server, controller.signal);
    setTimeout(() => controller.abort(), 200);
    const outcome = await fetchEvidence(request(`${base}/never-ends`), open, deps);
    assert.deepEqual(
      outcome.outcome === "failed" && [outcome.reason, outcome.retryable],
      ["cancelled", false],
    );
  });

  it("answers fetch_failed, retryable, when nothing listens", async () => {
    const closed = await listen("127.0.0.1", 0);
    await closed.close();
    const { deps } = fetchDeps(dns.server);
    const outcome = await fetchEvidence(request(`http://127.0.0.1:${closed.port}/`), open, deps);
    assert.equal(outcome.outcome, "failed");
    assert.equal(outcome.outcome === "failed" && outcome.retryable, true);
  });

  it("answers fetch_failed for a name with no address", async () => {
    const { deps } = fetchDeps(dns.server);
    const outcome = await fetchEvidence(request("http://nowhere.test/"), open, deps);
    assert.equal(outcome.outcome === "failed" && outcome.reason, "dns_failure");
  });

  it("refuses domains deny_domains lists, and those allow_domains leaves out, before DNS", async () => {
    const { deps } = fetchDeps(dns.server);
    const before = dns.queries.length;
    const denied = policy({ allow_private_cidrs: ["127.0.0.1/32"], deny_domains: ["site.test"] });
    const onlyOther = policy({
      allow_private_cidrs: ["127.0.0.1/32"],
      allow_domains: ["other.test"],
    });
    for (
      const [p, url] of [[denied, `http://denied.site.test:${S}/plain`], [
        onlyOther,
        `http://site.test:${S}/plain`,
      ], [onlyOther, `${base}/plain`]] as const
    ) {
      const outcome = await fetchEvidence(request(url), p, deps);
      assert.equal(outcome.outcome === "refused" && outcome.code, "url_forbidden", url);
    }
    assert.equal(dns.queries.length, before, "no name was resolved");
    const allowed = policy({ allow_private_cidrs: ["127.0.0.1/32"], allow_domains: ["site.test"] });
    assert.equal(
      (await fetchEvidence(request(`http://site.test:${S}/plain`), allowed, deps)).outcome,
      "fetched",
    );
  });

  it("is not opened by TRACEFETCH_ALLOW_LOOPBACK", async () => {
    const settings = readSettings({ TRACEFETCH_ALLOW_LOOPBACK: "1" }, { parseCidr }).withManifest({
      value: { schema_version: "tracefetch.providers.v1", providers: [], fetch: {} },
    });
    const { deps, guard } = fetchDeps(dns.server);
    const outcome = await fetchEvidence(
      request(`${base}/plain`),
      fetchPolicyOf(settings.manifest.fetch),
      deps,
    );
    assert.equal(outcome.outcome === "refused" && outcome.code, "url_forbidden");
    assert.deepEqual(guard.sent, []);
  });
});

describe("Node's connector", () => {
  it("connects to the address it is given and never resolves the URL's name", async () => {
    const { connector } = nodeFetchParts();
    const sent = await connector.send({
      url: new URL(`http://never-resolved.invalid:${S}/echo-accept`),
      address: "127.0.0.1",
      headers: { accept: "text/plain", "user-agent": "t" },
      signal: new AbortController().signal,
    });
    assert.ok(sent.ok);
    const body = await new Response(sent.body).text();
    assert.equal(body.split("\n")[2], `never-resolved.invalid:${S}`);
  });
});

describe("hostile markup", () => {
  it("reads markup nested too deep for the extractor as plain text, quickly", async () => {
    const depth = 30_000;
    const deep = await listen("127.0.0.1", 0, {
      "/robots.txt": text("text/plain", ""),
      "/deep": text(
        "text/html",
        `<html><head><title>Deep</title></head><body>${"<div>".repeat(depth)}bottom${
          "</div>".repeat(depth)
        }</body></html>`,
      ),
    });
    try {
      const evidence = await fetched(`http://127.0.0.1:${deep.port}/deep`);
      assert.equal((evidence as { markdown: string }).markdown, "bottom");
      assert.equal(evidence.title, "Deep");
      assert.equal(evidence.route, "extracted");
    } finally {
      await deep.close();
    }
  });

  it("cuts markup past 500,000 characters before extracting, and says truncated", async () => {
    // Markup-heavy paragraphs: 1,200 of about 470 characters, each with a short text of its own.
    const paragraphs = Array.from(
      { length: 1_200 },
      (_, n) => `<p class="${"c".repeat(440)}">paragraph-${n} of the article.</p>`,
    ).join("");
    const long = await listen("127.0.0.1", 0, {
      "/robots.txt": text("text/plain", ""),
      "/long": text(
        "text/html",
        `<html><body><article><h1>Long</h1>${paragraphs}</article></body></html>`,
      ),
    });
    try {
      const evidence = await fetched(`http://127.0.0.1:${long.port}/long`, { max_chars: 200_000 });
      const markdown = (evidence as { markdown: string }).markdown;
      assert.equal(evidence.truncated, true);
      assert.ok(markdown.includes("paragraph-0 "));
      assert.ok(!markdown.includes("paragraph-1199 "), "the markup past the cut was not read");
      assert.ok(markdown.length < 200_000, "the cut was the markup's, not max_chars'");
    } finally {
      await long.close();
    }
  });
});
