/**
 * The site the evidence tests fetch from, on 127.0.0.1 (opened by OPEN's allow_private_cidrs), with
 * a real DNS server beside it: an article with navigation, a cookie banner and a footer, served
 * markdown and text, robots.txt rules, redirects, failures, a gzip bomb and a body that never ends.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { gzipSync } from "node:zlib";
import { type Evidence, fetchEvidence } from "../../src/evidence/mod.ts";
import {
  fetchDeps,
  listen,
  type Listener,
  policy,
  request,
  type Route,
  startDns,
} from "./fetch-fixture.ts";

export const sha256 = (text: string | Uint8Array) =>
  createHash("sha256").update(text).digest("hex");

/** Opens the site's address, 127.0.0.1, and nothing else. */
export const OPEN = policy({ allow_private_cidrs: ["127.0.0.1/32"] });

/** A route answering `body` as `type` with `status`. */
export const text =
  (type: string, body: string | Uint8Array, status = 200): Route => (_req, res) => {
    res.writeHead(status, { "content-type": type });
    res.end(body);
  };

export const ARTICLE = `<!doctype html>
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
same or a higher level; the SHA-256 of those lines is kept beside them. A name like
snake_case_name and <code>2 * 3 * 4</code> stay whole, <em>emphasis</em> too.</p>
<h2>Links</h2>
<p>Links are absolute, so a relative <a href="../other/page.html">link</a> still leads somewhere
when the text is read away from the page; at most two hundred are listed.</p>
</article></main>
<footer class="site-footer">SITE-FOOTER all rights reserved <a href="/legal">Legal</a></footer>
</body></html>`;

/** 20,000,000 zero bytes, gzipped to about 20 KB. */
const bomb = gzipSync(new Uint8Array(20_000_000), { level: 9 });

export type EvidenceSite = {
  site: Listener;
  port: number;
  base: string;
  dns: Awaited<ReturnType<typeof startDns>>;
  /** Fetches `url` under `p` (OPEN by default) and returns its evidence, asserting it was fetched. */
  fetched: (
    url: string,
    extra?: Parameters<typeof request>[1],
    p?: typeof OPEN,
  ) => Promise<Evidence>;
  /** How many times the site was asked for `path`. */
  asked: (path: string) => number;
  close: () => Promise<void>;
};

export async function startEvidenceSite(): Promise<EvidenceSite> {
  const site: Listener = await listen("127.0.0.1", 0, {
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
  const dns = await startDns({
    "site.test": { a: ["127.0.0.1"] },
    "denied.site.test": { a: ["127.0.0.1"] },
  });
  const base = `http://127.0.0.1:${site.port}`;
  return {
    site,
    port: site.port,
    base,
    dns,
    fetched: async (url, extra = {}, p = OPEN) => {
      const { deps } = fetchDeps(dns.server);
      const outcome = await fetchEvidence(request(url, extra), p, deps);
      assert.equal(outcome.outcome, "fetched", JSON.stringify(outcome));
      return (outcome as { evidence: Evidence }).evidence;
    },
    asked: (path) => site.requests.filter((r) => r.path === path).length,
    close: () => Promise.all([site.close(), dns.close()]).then(() => {}),
  };
}
