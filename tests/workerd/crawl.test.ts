/**
 * POST /v1/crawl in workerd, through the bundled worker as deployed (the crawl route an extra
 * module): a loopback site the manifest opens is crawled whole, robots.txt honoured,
 * other origins skipped, and the events are the NDJSON the Node gateway sends.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Miniflare } from "miniflare";
import * as v from "valibot";
import { startWorker } from "./miniflare.ts";
import { listen, type Listener } from "../support/fetch-fixture.ts";
import { CrawlEventSchema } from "../../src/protocol/crawl-event-schema.ts";

const page = (i: number, links: string[]) =>
  `<!doctype html><html><head><title>Page ${i}</title></head><body><main><article>
<h1>Page ${i}</h1><p>Berth ${i} of the harbour, with its tide tables for the month.</p>
<p>${links.map((l) => `<a href="${l}">${l}</a>`).join(" ")}</p></article></main></body></html>`;

describe("crawl in workerd", () => {
  let mf: Miniflare;
  let site: Listener;
  before(async () => {
    const html = (body: string) => (_req: unknown, res: import("node:http").ServerResponse) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(body);
    };
    site = await listen("127.0.0.1", 0, {
      "/": html(page(0, ["/a", "/b", "/c", "/private", "http://harbour.invalid/x"])),
      "/a": html(page(1, ["/"])),
      "/b": html(page(2, ["/"])),
      "/c": html(page(3, ["/"])),
      "/private": html(page(4, [])),
      "/robots.txt": (_req, res) => {
        res.writeHead(200, { "content-type": "text/plain" });
        res.end("User-agent: *\nDisallow: /private\nCrawl-delay: 0\n");
      },
    });
    mf = await startWorker({
      TRACEFETCH_MANIFEST: JSON.stringify({
        schema_version: "tracefetch.providers.v1",
        providers: [],
        fetch: { allow_private_cidrs: ["127.0.0.1/32"] },
      }),
    });
  });
  after(async () => {
    await mf?.dispose();
    await site?.close();
  });

  it("fetches the site's pages, never the one robots.txt disallows, and skips the other origin", async () => {
    const base = `http://127.0.0.1:${site.port}`;
    const res = await mf.dispatchFetch("http://gateway.test/v1/crawl", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ url: `${base}/`, max_pages: 5 }),
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^application\/x-ndjson/);
    const events = (await res.text()).trim().split("\n").map((line) => JSON.parse(line));
    for (const event of events) {
      assert.ok(v.safeParse(CrawlEventSchema, event).success, JSON.stringify(event).slice(0, 200));
    }
    // Two pages are fetched at once, so pages of one depth may arrive in either order.
    const pages = events.filter((e) => e.event === "page").map((e) => e.url);
    assert.equal(pages[0], `${base}/`);
    assert.deepEqual(pages.sort(), [`${base}/`, `${base}/a`, `${base}/b`, `${base}/c`]);
    const asked = site.requests.map((r) => r.path).filter((p) => p !== "/robots.txt");
    assert.deepEqual(asked.sort(), ["/", "/a", "/b", "/c"]);
    const skipped = events.filter((e) => e.event === "skipped");
    assert.ok(skipped.some((e) => e.reason === "other_origin"));
    assert.ok(skipped.some((e) => e.reason === "robots" && e.url === `${base}/private`));
    const done = events.at(-1);
    assert.deepEqual([done.event, done.pages, done.ended], ["done", 4, "complete"]);
  });
});
