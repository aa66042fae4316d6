/**
 * fetchEvidence in workerd, with the worker's parts (DNS-over-HTTPS, the runtime's fetch): the
 * extractor runs there, and the URL forms aimed at forbidden addresses are refused with 0 requests
 * on the forbidden listeners.
 *
 * Not run here, because the runtime does not allow it: a name fetched by name (workerd's fetch
 * resolves it with the system's DNS, which does not know the test's names), and so the rebinding
 * case, which needs a connector that pins the checked address (docs/security.md, "Fetching pages").
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Miniflare } from "miniflare";
import { bundleEntry } from "./miniflare.ts";
import { forbiddenListeners, listen, type Listener } from "../support/fetch-fixture.ts";
import { directForms, FORBIDDEN_ZONE } from "../support/url-forms.ts";

/** A worker that runs one fetch per request, as the route will, and answers its outcome. */
const ENTRY = `
import { createRobotsCache, fetchEvidence, fetchPolicyOf, fetchUserAgent } from "./src/evidence/mod.ts";
import { workerFetchParts } from "./src/runtime/worker-evidence.ts";

export default {
  async fetch(request, env) {
    const { url, block, format, timeout_ms } = await request.json();
    const parts = workerFetchParts({ dohUrl: env.DOH_URL });
    const outcome = await fetchEvidence(
      { url, format: format ?? "markdown", max_chars: 20000, timeout_ms: timeout_ms ?? 5000 },
      fetchPolicyOf({ allow_private_cidrs: [], deny_domains: [], allow_domains: [], ...block }),
      {
        ...parts,
        now: () => Date.now(),
        signal: request.signal,
        robots: createRobotsCache(),
        userAgent: fetchUserAgent("0.0.0-test"),
      },
    );
    return Response.json(outcome);
  },
};
`;

const ARTICLE = `<!doctype html><html><head><title>Workerd page</title></head><body>
<nav>SITE-NAVIGATION <a href="/">Home</a></nav>
<article><h1>Evidence in workerd</h1><p>Readability, linkedom and turndown run inside the isolate, so
a page fetched by the worker comes back as markdown like it does on Node and Deno, with its links made
<a href="/abs">absolute</a> and one anchor per heading.</p>
<h2>Second heading</h2><p>More text for the article, long enough to be kept by the extractor as content
rather than dropped as boilerplate of the page around it.</p></article>
<footer>SITE-FOOTER</footer></body></html>`;

describe("fetchEvidence in workerd", () => {
  let mf: Miniflare;
  let site: Listener;
  let doh: Listener;
  let local: Listener;
  let forbidden: Awaited<ReturnType<typeof forbiddenListeners>>;
  const open = { allow_private_cidrs: ["127.0.0.1/32"] };

  before(async () => {
    site = await listen("127.0.0.1", 0, {
      "/robots.txt": (_req, res) => {
        res.writeHead(200, { "content-type": "text/plain" });
        res.end("User-agent: *\nDisallow: /private\n");
      },
      "/article": (_req, res) => {
        res.writeHead(200, { "content-type": "text/html" });
        res.end(ARTICLE);
      },
      "/private": (_req, res) => {
        res.writeHead(200, { "content-type": "text/plain" });
        res.end("private");
      },
      "/to-loopback": (_req, res) => {
        res.writeHead(302, { location: `//127.0.0.2:${local.port}/` });
        res.end();
      },
      "/to-name": (_req, res) => {
        res.writeHead(307, { location: `http://loop.test:${local.port}/` });
        res.end();
      },
      "/never-ends": (_req, res) => {
        res.writeHead(200, { "content-type": "text/plain" });
        res.write("and then nothing\n");
      },
    });
    doh = await listen("127.0.0.1", 0, {
      "/dns-query": (req, res) => {
        const query = new URL(req.url ?? "", "http://doh").searchParams;
        const entry = FORBIDDEN_ZONE[query.get("name") ?? ""];
        const v6 = query.get("type") === "AAAA";
        const data = (v6 ? entry?.aaaa : entry?.a) ?? [];
        res.writeHead(200, { "content-type": "application/dns-json" });
        res.end(JSON.stringify({
          Status: entry === undefined ? 3 : 0,
          Answer: data.map((address) => ({ type: v6 ? 28 : 1, data: address })),
        }));
      },
    });
    local = await listen("127.0.0.1", 0);
    forbidden = await forbiddenListeners(local.port);
    mf = new Miniflare({
      modules: true,
      script: await bundleEntry(ENTRY, "evidence-worker.ts"),
      compatibilityDate: "2026-04-26",
      compatibilityFlags: ["enable_request_signal"],
      bindings: { DOH_URL: `http://127.0.0.1:${doh.port}/dns-query` },
    });
    await mf.ready;
  });

  after(async () => {
    await mf?.dispose();
    await Promise.all([site?.close(), doh?.close(), local?.close(), forbidden?.close()]);
  });

  const run = async (body: Record<string, unknown>) => {
    const res = await mf.dispatchFetch("http://worker.test/", {
      method: "POST",
      body: JSON.stringify(body),
    });
    return await res.json() as Record<string, unknown> & {
      evidence?: Record<string, unknown> & { markdown: string; anchors: unknown[] };
    };
  };

  it("extracts a page on an allowed loopback address to markdown without navigation or footer", async () => {
    const outcome = await run({ url: `http://127.0.0.1:${site.port}/article`, block: open });
    assert.equal(outcome.outcome, "fetched", JSON.stringify(outcome));
    const evidence = outcome.evidence!;
    assert.match(evidence.markdown, /Readability, linkedom and turndown run inside the isolate/);
    assert.ok(!evidence.markdown.includes("SITE-NAVIGATION"));
    assert.ok(!evidence.markdown.includes("SITE-FOOTER"));
    assert.ok(evidence.markdown.includes(`(http://127.0.0.1:${site.port}/abs)`));
    assert.equal(evidence.anchors.length, 2);
    assert.equal(evidence.route, "extracted");
  });

  it("never requests a page robots.txt disallows", async () => {
    const outcome = await run({ url: `http://127.0.0.1:${site.port}/private`, block: open });
    assert.equal(outcome.code, "robots_disallowed");
    assert.equal(site.requests.filter((r) => r.path === "/private").length, 0);
  });

  it("cuts a body that never ends at the fetch's timeout", async () => {
    const outcome = await run({
      url: `http://127.0.0.1:${site.port}/never-ends`,
      block: open,
      timeout_ms: 500,
    });
    assert.deepEqual([outcome.outcome, outcome.reason], ["failed", "timeout"]);
  });

  it("refuses redirects to 127.0.0.2, protocol-relative, and to a name resolving there", async () => {
    for (const path of ["/to-loopback", "/to-name"]) {
      const outcome = await run({ url: `http://127.0.0.1:${site.port}${path}`, block: open });
      assert.equal(outcome.code, "url_forbidden", path);
    }
  });

  it(`refuses all ${directForms.length} direct forms`, async () => {
    for (const [name, url] of directForms) {
      const outcome = await run({ url: url(local.port), block: {} });
      assert.equal(outcome.code, "url_forbidden", `${name}: ${JSON.stringify(outcome)}`);
    }
  });

  it("let no request reach a forbidden listener", () => {
    assert.equal(forbidden.count(), 0);
    assert.equal(local.requests.length, 0);
  });
});
