/**
 * The evidence routes as the operator's metrics and traces see them (docs/deploy.md, "Observing
 * it"): each page fetch counted by outcome and code, timed, its bytes summed; each verify counted
 * by verdict; the page fetch a client span of the request's server span, carrying the page's host
 * and never its path; nothing in a metric names the host or the path. Runs unchanged under
 * `deno test`.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { evidenceGateway, startSite } from "./support/evidence-gateway.ts";
import { type OtlpReceiver, startOtlpReceiver } from "./support/otlp-receiver.ts";
import { telemetryFor } from "../src/observe/telemetry-for.ts";
import { readSettings } from "../src/config/settings.ts";

const CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";
/** SpanKind in OTLP: SERVER 2, CLIENT 3; status code 2 is an error. */
const SERVER = 2;
const CLIENT = 3;
const ERROR = 2;
/** Fetches of the same page, 10 ms apart, before its answer must have been cached. */
const CACHED_WITHIN_TRIES = 50;

/** The value of one exposition line, by its name and labels as written. */
function valueOf(text: string, series: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return Number(line?.split(" ").at(-1));
}

describe("metrics and spans of the evidence routes", () => {
  let site: Awaited<ReturnType<typeof startSite>>;
  let receiver: OtlpReceiver;
  before(async () => {
    site = await startSite();
    receiver = await startOtlpReceiver();
  });
  after(async () => {
    await site.close();
    await receiver.close();
  });

  it("count fetches by outcome and verifies by verdict; a fetch's span has its host only", async () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url };
    const telemetry = telemetryFor(readSettings(env).env.telemetry);
    const gw = await evidenceGateway({ env, ports: { telemetry } });
    try {
      const post = async (path: string, body: unknown) =>
        await (await gw.app.request(path, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`,
          },
          body: JSON.stringify(body),
        })).json();
      const fetch = (url: string) => post("/v1/fetch", { url });
      assert.equal((await fetch(`${site.base}/missing-page`)).code, "fetch_failed");
      assert.equal((await fetch("http://127.0.0.2/secret-path")).code, "url_forbidden");
      const fetched = await fetch(`${site.base}/article`);
      assert.equal(fetched.code, "ok");
      // The answer is cached after it is sent: fetch again until the cache answers.
      let reads = 1;
      for (let tries = 0; tries < CACHED_WITHIN_TRIES; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        if ((await fetch(`${site.base}/article`)).result.cached) break;
        reads++;
      }
      const { receipt, evidence } = fetched.result;
      const verify = async (quote: string) =>
        (await post("/v1/verify", { receipt, markdown: evidence.markdown, quote })).result.verdict;
      assert.equal(await verify("Spring tides"), "verified");
      assert.equal(await verify("words the page never had"), "quote_not_found");

      const text = await (await gw.app.request("/metrics")).text();
      assert.equal(valueOf(text, 'tracefetch_fetches_total{outcome="fetched",code="ok"}'), reads);
      assert.equal(valueOf(text, 'tracefetch_fetches_total{outcome="cached",code="ok"}'), 1);
      assert.equal(
        valueOf(text, 'tracefetch_fetches_total{outcome="failed",code="fetch_failed"}'),
        1,
      );
      assert.equal(
        valueOf(text, 'tracefetch_fetches_total{outcome="refused",code="url_forbidden"}'),
        1,
      );
      assert.equal(
        valueOf(text, 'tracefetch_fetch_duration_seconds_count{outcome="fetched"}'),
        reads,
      );
      assert.equal(valueOf(text, "tracefetch_fetch_bytes_read_total"), reads * evidence.bytes);
      assert.equal(valueOf(text, 'tracefetch_verifies_total{verdict="verified"}'), 1);
      assert.equal(valueOf(text, 'tracefetch_verifies_total{verdict="quote_not_found"}'), 1);
      for (const secret of ["127.0.0", "article", "missing-page", "secret-path"]) {
        assert.ok(!text.includes(secret), secret);
      }

      await telemetry.tracing?.flush();
      const servers = receiver.spans.filter((s) => s.kind === SERVER && s.name !== "GET /metrics");
      assert.deepEqual(
        servers.map((s) => s.name),
        [...Array(3 + reads).fill("POST /v1/fetch"), ...Array(2).fill("POST /v1/verify")],
      );
      assert.ok(servers.every((s) => s.traceId === CALLER_TRACE && s.parentSpanId === CALLER_SPAN));
      // The cached answer reached no page: every other fetch is a client span of its request's.
      const pages = receiver.spans.filter((s) => s.kind === CLIENT);
      assert.deepEqual(pages.map((s) => s.name), Array(2 + reads).fill("fetch page"));
      const [missing, refused, read] = pages;
      assert.deepEqual(
        pages.map((p) => p.parentSpanId),
        servers.slice(0, 2 + reads).map((s) => s.spanId),
      );
      assert.equal(read?.attributes["server.address"], "127.0.0.1");
      assert.equal(Number(read?.attributes["http.response.status_code"]), 200);
      assert.equal(read?.status, 0);
      assert.equal(Number(missing?.attributes["http.response.status_code"]), 404);
      assert.equal(missing?.attributes["error.type"], "http_status");
      assert.equal(missing?.status, ERROR);
      assert.equal(refused?.attributes["server.address"], "127.0.0.2");
      assert.equal(refused?.attributes["error.type"], "url_forbidden");
      assert.equal(refused?.status, ERROR);
      for (const body of receiver.bodies) {
        for (const secret of ["article", "missing-page", "secret-path", "Spring tides"]) {
          assert.ok(!body.includes(secret), secret);
        }
      }
    } finally {
      await gw.close();
    }
  });
});
