/**
 * POST /v1/crawl over a loopback site of 30 pages served by the test, through a real gateway
 * listener (docs/envelope.md, "Crawling a site"): exactly `max_pages` pages of the site's origin
 * are fetched, never one robots.txt disallows, never more than two at once (the site counts its
 * requests in flight), and no page is asked once the caller has been gone a second; links to
 * another origin, to a file that is not a page and past a limit are `skipped` events.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { IncomingMessage, ServerResponse } from "node:http";
import * as v from "valibot";
import { listen as listenGateway, type Listening } from "../src/runtime/node-listen.ts";
import { CrawlEventSchema } from "../src/protocol/crawl-event-schema.ts";
import { evidenceGateway } from "./support/evidence-gateway.ts";
import { listen, type Listener } from "./support/fetch-fixture.ts";
import { assertEnvelope } from "./support/gateway.ts";
import { type Arrived, collect, frames, parse } from "./support/streams.ts";
import { runCli, runJson, tempConfig } from "./support/cli.ts";
import { PrometheusMetrics } from "../src/observe/prometheus-metrics.ts";
import { OriginGates } from "../src/evidence/origin-gates.ts";

/** Pages of the site: `/` and /p/1 to /p/29. */
const PAGES = 30;
/** Each page answers this late, so that a crawl that did not bound itself would overlap many. */
const PAGE_LATENCY_MS = 60;

/** The links of page `i` (0 is `/`): five children each, a tree of 30 pages 3 levels deep. */
function childrenOf(i: number): number[] {
  return [1, 2, 3, 4, 5].map((k) => i * 5 + k).filter((n) => n < PAGES);
}

const pathOf = (i: number) => (i === 0 ? "/" : `/p/${i}`);

function pageHtml(i: number): string {
  const links = childrenOf(i).map((n) => `<li><a href="${pathOf(n)}">Page ${n}</a></li>`);
  return `<!doctype html><html><head><title>Page ${i}</title></head><body>
<nav><a href="/">Home</a></nav>
<main><article><h1>Page ${i}</h1>
<p>This is page ${i} of the harbour almanac. The tide tables for berth ${i} are below, with the
times of high and low water for every day of the month.</p>
<ul>${links.join("")}</ul>
<p>See also <a href="/private/ledger">the ledger</a>, <a href="/chart.png">the chart</a> and
<a href="http://harbour.invalid/elsewhere">another harbour</a>.</p>
</article></main></body></html>`;
}

type Site = Listener & {
  base: string;
  /** Page requests (robots.txt left out), with when each started. */
  pages: Array<{ path: string; at: number }>;
  maxInFlight: () => number;
};

async function startCrawlSite(latencyMs = PAGE_LATENCY_MS): Promise<Site> {
  let inFlight = 0;
  let most = 0;
  const pages: Site["pages"] = [];
  const serve = (i: number) => (_req: IncomingMessage, res: ServerResponse) => {
    pages.push({ path: pathOf(i), at: performance.now() });
    inFlight += 1;
    most = Math.max(most, inFlight);
    const timer = setTimeout(() => {
      inFlight -= 1;
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(pageHtml(i));
    }, latencyMs);
    res.once("close", () => {
      if (!res.writableEnded) {
        clearTimeout(timer);
        inFlight -= 1;
      }
    });
  };
  const routes: Record<string, ReturnType<typeof serve>> = {};
  for (let i = 0; i < PAGES; i++) routes[pathOf(i)] = serve(i);
  routes["/robots.txt"] = (_req, res) => {
    res.writeHead(200, { "content-type": "text/plain" });
    res.end("User-agent: *\nDisallow: /private\nCrawl-delay: 0.01\n");
  };
  const disallowed = (req: IncomingMessage, res: ServerResponse) => {
    pages.push({ path: req.url ?? "", at: performance.now() });
    res.writeHead(200, { "content-type": "text/html" });
    res.end("<p>never for a crawler</p>");
  };
  routes["/private/ledger"] = disallowed;
  routes["/chart.png"] = disallowed;
  const site = await listen("127.0.0.1", 0, routes);
  return { ...site, base: `http://127.0.0.1:${site.port}`, pages, maxInFlight: () => most };
}

async function crawl(
  gateway: Listening,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
) {
  return await fetch(`http://127.0.0.1:${gateway.port}/v1/crawl`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
    ...(signal === undefined ? {} : { signal }),
  });
}

function checked(events: Arrived[]) {
  for (const { event } of events) {
    const parsed = v.safeParse(CrawlEventSchema, event);
    assert.ok(parsed.success, `${JSON.stringify(event).slice(0, 300)} is not a crawl event`);
  }
  // deno-lint-ignore no-explicit-any
  return events.map((e) => e.event) as Array<Record<string, any> & { event: string }>;
}

describe("POST /v1/crawl over a loopback site of 30 pages", () => {
  let gw: Awaited<ReturnType<typeof evidenceGateway>>;
  let served: Listening;
  before(async () => {
    gw = await evidenceGateway();
    served = await listenGateway(gw.app.fetch);
  });
  after(async () => {
    await served.close();
    await gw.close();
  });

  it("max_pages 10, max_depth 2: exactly 10 pages of the origin, none robots.txt disallows, never more than 2 at once; other origins, types and limits are skipped", async () => {
    const site = await startCrawlSite();
    try {
      const res = await crawl(served, { url: `${site.base}/`, max_pages: 10, max_depth: 2 });
      assert.equal(res.status, 200);
      assert.match(res.headers.get("content-type") ?? "", /^application\/x-ndjson/);
      const events = checked(await collect(res.body!, "ndjson"));
      const pages = events.filter((e) => e.event === "page");
      assert.equal(pages.length, 10);
      assert.equal(site.pages.length, 10, site.pages.map((p) => p.path).join(", "));
      for (const page of pages) {
        assert.equal(new URL(page.result.evidence.final_url).origin, site.base);
        assert.match(page.result.evidence.markdown, /harbour almanac/);
      }
      assert.ok(!site.pages.some((p) => p.path.startsWith("/private")), "a disallowed page");
      assert.ok(!site.pages.some((p) => p.path === "/chart.png"), "an image was asked");
      assert.ok(site.maxInFlight() <= 2, `${site.maxInFlight()} requests at once`);
      // Breadth first: the first page, its five children, then four of their children (which
      // four depends on which children answered first).
      assert.equal(site.pages[0]?.path, "/");
      assert.deepEqual(pages.map((p) => p.depth).sort(), [0, 1, 1, 1, 1, 1, 2, 2, 2, 2]);
      const skipped = events.filter((e) => e.event === "skipped");
      const reasons = (reason: string) => skipped.filter((e) => e.reason === reason);
      assert.deepEqual(reasons("other_origin").map((e) => e.url), [
        "http://harbour.invalid/elsewhere",
      ]);
      assert.deepEqual(reasons("robots").map((e) => e.url), [`${site.base}/private/ledger`]);
      assert.deepEqual(reasons("type").map((e) => e.url), [`${site.base}/chart.png`]);
      assert.ok(reasons("limit").every((e) => e.limit === "max_pages"));
      assert.ok(reasons("limit").length > 0);
      const done = events.at(-1)!;
      assert.equal(done.event, "done");
      assert.deepEqual([done.code, done.ended, done.pages], ["ok", "max_pages", 10]);
      assert.equal(done.skipped.limit, reasons("limit").length);
    } finally {
      await site.close();
    }
  });

  it("two crawls of one site at once share its two places", async () => {
    const site = await startCrawlSite();
    try {
      // Disjoint parts of the site, so that neither finds its pages in the other's cache.
      const [a, b] = await Promise.all(
        ["/p/1", "/p/2"].map(async (path) => {
          const res = await crawl(served, { url: `${site.base}${path}`, max_depth: 1 });
          return checked(await collect(res.body!, "ndjson")).filter((e) => e.event === "page");
        }),
      );
      assert.deepEqual([a?.length, b?.length], [6, 6]);
      assert.equal(site.pages.length, 12);
      assert.ok(site.maxInFlight() <= 2, `${site.maxInFlight()} requests at once`);
    } finally {
      await site.close();
    }
  });

  it("max_depth 0 fetches the first page alone; deeper links are skipped as max_depth; SSE on Accept: text/event-stream", async () => {
    const site = await startCrawlSite(0);
    try {
      const res = await crawl(served, { url: `${site.base}/p/1`, max_depth: 0 }, {
        accept: "text/event-stream",
      });
      assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
      const events = checked(
        (await collect(res.body!, "sse")).filter((e) => e.event.event !== "comment"),
      );
      assert.deepEqual(events.filter((e) => e.event === "page").map((e) => e.url), [
        `${site.base}/p/1`,
      ]);
      const depthSkips = events.filter((e) => e.event === "skipped" && e.limit === "max_depth");
      // The navigation's link home is not in the article; the ledger is past the depth before
      // robots.txt is asked about it.
      assert.deepEqual(depthSkips.map((e) => new URL(e.url).pathname).sort(), [
        "/p/10",
        "/p/6",
        "/p/7",
        "/p/8",
        "/p/9",
        "/private/ledger",
      ]);
      assert.deepEqual(site.pages.map((p) => p.path), ["/p/1"]);
      assert.equal(events.at(-1)?.ended, "complete");
    } finally {
      await site.close();
    }
  });

  it("with a query, each page carries its passages", async () => {
    const site = await startCrawlSite(0);
    try {
      const res = await crawl(served, {
        url: `${site.base}/`,
        max_pages: 2,
        max_depth: 1,
        query: "low water times",
      });
      const pages = checked(await collect(res.body!, "ndjson")).filter((e) => e.event === "page");
      assert.equal(pages.length, 2);
      for (const page of pages) {
        assert.match(page.result.evidence.passages[0].text, /low water/);
      }
    } finally {
      await site.close();
    }
  });

  it("a caller that goes away stops the crawl: no page is asked a second after", async () => {
    const site = await startCrawlSite(300);
    try {
      const caller = new AbortController();
      const res = await crawl(
        served,
        { url: `${site.base}/`, max_pages: 50, max_depth: 3 },
        {},
        caller.signal,
      );
      const stream = frames(res.body!, "ndjson");
      for (let pages = 0; pages < 2;) {
        const next = await stream.next();
        assert.ok(!next.done, "the stream ended early");
        if (parse(next.value.raw, "ndjson").event === "page") pages += 1;
      }
      const leftAt = performance.now();
      caller.abort();
      await stream.return(undefined).catch(() => {});
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const late = site.pages.filter((p) => p.at > leftAt + 1_000);
      assert.deepEqual(late.map((p) => p.path), [], "pages asked over a second after");
      assert.ok(site.pages.length < 10, `${site.pages.length} pages were asked`);
    } finally {
      await site.close();
    }
  });

  it("refusals come before the stream: a bad request, a URL the policy refuses", async () => {
    for (
      const [body, status, code] of [
        [{ url: "http://127.0.0.1:9/", max_pages: 51 }, 400, "invalid_field"],
        [{ url: "http://127.0.0.1:9/", max_depth: 4 }, 400, "invalid_field"],
        [{ url: "http://127.0.0.1:9/", depth: 1 }, 400, "unknown_field"],
        [{ url: "http://10.0.0.1/" }, 403, "url_forbidden"],
      ] as const
    ) {
      const res = await crawl(served, body);
      const envelope = assertEnvelope(await res.json());
      assert.deepEqual([res.status, envelope.command, envelope.code], [status, "crawl", code]);
    }
  });
});

describe("POST /v1/crawl under caller_limits", () => {
  it("each page counts as a fetch: past the limit the crawl ends refused, and the next one is a 429 before any stream", async () => {
    const site = await startCrawlSite(0);
    const gw = await evidenceGateway({ extra: { caller_limits: { searches_per_minute: 3 } } });
    const served = await listenGateway(gw.app.fetch);
    try {
      const res = await crawl(served, { url: `${site.base}/`, max_pages: 10 });
      const events = checked(await collect(res.body!, "ndjson"));
      assert.equal(events.filter((e) => e.event === "page").length, 3);
      assert.equal(site.pages.length, 3);
      const done = events.at(-1)!;
      assert.deepEqual([done.event, done.ended, done.code], ["done", "refused", "rate_limited"]);
      const again = await crawl(served, { url: `${site.base}/` });
      const envelope = assertEnvelope(await again.json());
      assert.deepEqual([again.status, envelope.command, envelope.code], [
        429,
        "crawl",
        "rate_limited",
      ]);
      assert.equal(site.pages.length, 3);
    } finally {
      await served.close();
      await gw.close();
      await site.close();
    }
  });
});

describe("OriginGates", () => {
  it("two places per origin; a waiter that aborts leaves, and an origin no one uses is forgotten", async () => {
    const gates = new OriginGates();
    const never = new AbortController().signal;
    const one = await gates.acquire("http://a.test", never);
    const two = await gates.acquire("http://a.test", never);
    const other = await gates.acquire("http://b.test", never);
    const leaving = new AbortController();
    const waiting = gates.acquire("http://a.test", leaving.signal);
    leaving.abort();
    await assert.rejects(waiting);
    let third = false;
    const next = gates.acquire("http://a.test", never).then((release) => {
      third = true;
      return release;
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(third, false, "a third place while two are held");
    one();
    (await next)();
    two();
    other();
    assert.equal(gates.size, 0);
  });
});

describe("POST /v1/crawl in the metrics", () => {
  it("counts each crawl by how it ended, and the pages it answered", async () => {
    const site = await startCrawlSite(0);
    const gw = await evidenceGateway({
      ports: { telemetry: { metrics: new PrometheusMetrics(), tracing: null } },
    });
    const served = await listenGateway(gw.app.fetch);
    try {
      const res = await crawl(served, { url: `${site.base}/`, max_pages: 2 });
      await collect(res.body!, "ndjson");
      const text = await (await fetch(`http://127.0.0.1:${served.port}/metrics`)).text();
      assert.match(text, /^tracefetch_crawls_total\{ended="max_pages"\} 1$/m);
      assert.match(text, /^tracefetch_crawl_pages_total 2$/m);
    } finally {
      await served.close();
      await gw.close();
      await site.close();
    }
  });
});

describe("tracefetch crawl", () => {
  it("prints a line per page, then the counts; --json answers one envelope with them", async () => {
    const site = await startCrawlSite(0);
    const gw = await evidenceGateway();
    const served = await listenGateway(gw.app.fetch);
    const temp = await tempConfig();
    try {
      const gateway = `http://127.0.0.1:${served.port}`;
      const args = ["crawl", `${site.base}/`, "--max-pages", "3", "--gateway", gateway];
      const run = await runCli(args, { config: temp.dir });
      assert.equal(run.code, 0, run.stderr);
      const lines = run.stdout.trim().split("\n");
      // Two pages are fetched at once, so the two at depth 1 may arrive in either order.
      assert.deepEqual(lines.slice(0, 3).map((l) => l.split("  ")[0]).sort(), [
        `[0] ${site.base}/`,
        `[1] ${site.base}/p/1`,
        `[1] ${site.base}/p/2`,
      ]);
      assert.match(
        lines[3] ?? "",
        /^3 page\(s\), ended max_pages; skipped: 0 robots, 1 other origin, 1 type/,
      );
      const { envelope } = await runJson([...args, "--max-depth", "0"], { config: temp.dir });
      assert.deepEqual([envelope.command, envelope.code], ["crawl", "ok"]);
      assert.deepEqual([envelope.result.pages, envelope.result.ended], [1, "complete"]);
    } finally {
      await temp.remove();
      await served.close();
      await gw.close();
      await site.close();
    }
  });
});

describe("POST /v1/crawl on a gateway that does not fetch", () => {
  it("is fetch_disabled", async () => {
    const gw = await evidenceGateway({ fetch: null });
    try {
      const res = await gw.app.request("/v1/crawl", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ url: "http://127.0.0.1:9/" }),
      });
      const envelope = assertEnvelope(await res.json());
      assert.deepEqual([res.status, envelope.code], [403, "fetch_disabled"]);
    } finally {
      await gw.close();
    }
  });
});
