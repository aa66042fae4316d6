/**
 * Scenario 8, fetching a page (docs/envelope.md, "Fetching a page"): a 100 KB article served on
 * 127.0.0.1 and a gateway whose manifest opens that address to fetch.
 *
 * - Latency, over HTTP against a gateway started as `npm start` starts it: a cached fetch and a
 *   cached search (one zero-delay provider with `cache_ttl_seconds`) taking turns; the bar is the
 *   fetch's p50 within twice the search's.
 * - Gateway CPU of an uncached fetch (`max_age_seconds: 0`), measured in this process around each
 *   request (process.cpuUsage, microseconds) with the gateway built in process by createGateway
 *   and Node's fetch parts, so the figure is per fetch and has a p50. The page is served by a
 *   child process (page-site.ts), so its serving is not counted. Printed beside the extraction
 *   alone (extractPage on the same page, same measure). The bar: 20 ms.
 * - The extractor's CPU against Readability over linkedom's on the same pages (extraction-cpu.ts).
 */
import { createGateway } from "../src/http/create-gateway.ts";
import { readSettings } from "../src/config/settings.ts";
import { parseCidr } from "../src/io/ip-rules.ts";
import { nodePorts } from "../src/runtime/node-fetch.ts";
import { nodeFetchParts } from "../src/runtime/node-evidence.ts";
import { extractPage } from "../src/evidence/extract-page.ts";
import { extractionRows } from "./extraction-cpu.ts";
import { page } from "./article-page.ts";
import { startChild } from "./children.ts";
import { interleaved } from "./http-client.ts";
import { type Row, verdict } from "./report.ts";
import { startGateway } from "./soak-gateway.ts";
import { ms, p50, p99 } from "./stats.ts";
import { GROUPS, SCOPE, type Urls } from "./targets.ts";

/** The bars: a cached fetch within 2x a cached search; an uncached one at most 20 ms CPU. */
const CACHED_RATIO_TARGET = 2;
const UNCACHED_CPU_TARGET_MS = 20;
const WARM = 30;
const COUNT = 300;
/** Uncached fetches (each extracts 100 KB of HTML): fewer, as each costs milliseconds of CPU. */
const CPU_WARM = 10;
const CPU_COUNT = 100;
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

export async function fetchScenario(urls: Urls, extractionData?: string): Promise<Row[]> {
  const html = page();
  // Served by a process of its own: the CPU measured in this one is then the gateway's alone.
  const site = await startChild<{ port: number }>("page site", "./page-site.ts");
  const pageUrl = `http://127.0.0.1:${site.info.port}/page`;
  const name = GROUPS.zero4[0] as string;
  const manifest = {
    schema_version: "tracefetch.providers.v1",
    providers: [{
      name,
      endpoint: urls[name],
      scope: SCOPE,
      timeout_seconds: 10,
      cache_ttl_seconds: 3600,
    }],
    fetch: { allow_private_cidrs: ["127.0.0.1/32"] },
  };
  try {
    const gateway = await startGateway({
      HOST: "127.0.0.1",
      PORT: "0",
      TRACEFETCH_MANIFEST: JSON.stringify(manifest),
      TRACEFETCH_ALLOW_LOOPBACK: "1",
      TRACEFETCH_API_DOCS: "0",
      TRACEFETCH_STATE_URL: "",
    });
    let latency;
    try {
      const search = `${gateway.url}/v1/search?${new URLSearchParams({
        q: "cached",
        limit: "10",
      })}`;
      const fetchUrl = `${gateway.url}/v1/fetch?${new URLSearchParams({ url: pageUrl })}`;
      for (const url of [search, fetchUrl]) {
        const first = await (await fetch(url)).json() as { code?: string };
        if (first.code !== "ok") throw new Error(`${url} answered ${first.code}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
      const [searches, fetches] = await interleaved(
        [{ url: search }, { url: fetchUrl }],
        WARM,
        COUNT,
      );
      latency = {
        search: (searches ?? []).map((t) => t.ms),
        fetch: (fetches ?? []).map((t) => t.ms),
      };
      if (gateway.faultLines.length > 0) throw new Error(gateway.faultLines[0]);
    } finally {
      await gateway.stop();
    }

    const read = readSettings({ TRACEFETCH_API_DOCS: "0" }, { parseCidr });
    const app = createGateway(read.withManifest({ value: manifest, loopback: true }), {
      ...nodePorts(),
      evidence: nodeFetchParts(),
    });
    const body = JSON.stringify({ url: pageUrl, max_age_seconds: 0 });
    const perFetch: number[] = [];
    for (let i = 0; i < CPU_WARM + CPU_COUNT; i++) {
      const before = cpuMs();
      const res = await app.request("/v1/fetch", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      const answer = await res.json() as { code?: string };
      if (answer.code !== "ok") throw new Error(`an uncached fetch answered ${answer.code}`);
      if (i >= CPU_WARM) perFetch.push(cpuMs() - before);
    }
    const extraction: number[] = [];
    for (let i = 0; i < CPU_WARM + CPU_COUNT; i++) {
      const before = cpuMs();
      await extractPage({
        body: html,
        kind: "html",
        url: new URL(pageUrl),
        format: "markdown",
        maxChars: 20_000,
      });
      if (i >= CPU_WARM) extraction.push(cpuMs() - before);
    }
    const ratio = p50(latency.fetch) / p50(latency.search);
    const extractionCpu = await extractionRows(html, extractionData);
    return [{
      measurement: "8 cached fetch, p50 (p99) [8]",
      gateway: `${ms(p50(latency.fetch))} (${ms(p99(latency.fetch))})`,
      naive: "",
      reference: `cached search ${ms(p50(latency.search))} (${ms(p99(latency.search))}); ratio ${
        ratio.toFixed(2)
      }`,
      target: `<= ${CACHED_RATIO_TARGET}x the search`,
      result: verdict(ratio <= CACHED_RATIO_TARGET),
    }, {
      measurement: `8 uncached fetch of ${Math.round(html.length / 1000)} KB, CPU p50 (p99)`,
      gateway: `${ms(p50(perFetch))} (${ms(p99(perFetch))})`,
      naive: "",
      reference: `extraction alone ${ms(p50(extraction))} (${ms(p99(extraction))}); the rest ${
        ms(p50(perFetch) - p50(extraction))
      } at p50`,
      target: `<= ${UNCACHED_CPU_TARGET_MS} ms`,
      result: verdict(p50(perFetch) <= UNCACHED_CPU_TARGET_MS),
    }, ...extractionCpu];
  } finally {
    await site.stop();
  }
}
