/**
 * Acceptance (issue "Operators can see it"): a real Prometheus scrapes `GET /metrics` while 10
 * searches run over one working and one always-failing provider, and PromQL sees them.
 * Without prometheus installed the suite is skipped in one line, or fails when
 * TRACEFETCH_REQUIRE_PROMETHEUS=1 (as .ci/run sets it).
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { gateway } from "./support/gateway.ts";
import { answer, startServer, type TestServer } from "./support/servers.ts";
import {
  type Prometheus,
  PROMETHEUS_MISSING,
  prometheusPath,
  startPrometheus,
  until,
} from "./support/prometheus-server.ts";
import { listen, type Listening } from "../src/runtime/node-listen.ts";
import { PrometheusMetrics } from "../src/observe/prometheus-metrics.ts";

const missing = prometheusPath() === null ? PROMETHEUS_MISSING : null;
const required = process.env.TRACEFETCH_REQUIRE_PROMETHEUS === "1";
/** Scrapes happen every second; the first about 5 s after start: 20 s bounds the wait. */
const SCRAPED_WITHIN_MS = 20_000;
const SEARCHES = 10;

if (missing !== null) {
  if (!required) console.log(`prometheus suite skipped: ${missing}`);
  describe("a real Prometheus scraping /metrics", { skip: required ? false : missing }, () => {
    it("has prometheus to run against (TRACEFETCH_REQUIRE_PROMETHEUS=1)", () => {
      assert.fail(`TRACEFETCH_REQUIRE_PROMETHEUS=1, but ${missing}`);
    });
  });
} else {
  describe("a real Prometheus scraping /metrics", () => {
    let good: TestServer;
    let bad: TestServer;
    let served: Listening;
    let prometheus: Prometheus;

    before(async () => {
      good = await startServer(
        answer("good", "good", [{ title: "A", locator: "https://example.com/a" }]),
      );
      bad = await startServer((_req, res) => {
        res.writeHead(500, { "content-type": "text/plain" });
        res.end("down");
      });
      const app = gateway([
        { name: "good", endpoint: good.url },
        { name: "bad", endpoint: bad.url },
      ], {
        // Every search must reach the failing provider: no suspension after its failures.
        env: { TRACEFETCH_SUSPEND_PROVIDERS: "off" },
        ports: { telemetry: { metrics: new PrometheusMetrics(), tracing: null } },
      });
      served = await listen((request) => app.fetch(request));
      prometheus = await startPrometheus([`127.0.0.1:${served.port}`]);
    });

    after(async () => {
      await prometheus?.stop();
      await served?.close();
      await good?.close();
      await bad?.close();
    });

    it("counts 10 searches and 10 attempts of the failing provider, with attempt buckets", async () => {
      for (let i = 0; i < SEARCHES; i++) {
        const response = await fetch(
          `http://127.0.0.1:${served.port}/v1/search?q=${encodeURIComponent(`query number ${i}`)}`,
        );
        assert.equal(response.status, 200, "one provider answers: a partial success");
        await response.body?.cancel();
      }
      const bad = 'sum(tracefetch_provider_attempts_total{provider="bad"})';
      assert.equal(
        await until(() => prometheus.query(bad), (v) => v === SEARCHES, SCRAPED_WITHIN_MS),
        SEARCHES,
      );
      assert.equal(await prometheus.query("sum(tracefetch_searches_total)"), SEARCHES);
      const buckets = await prometheus.seriesCount(
        'tracefetch_provider_attempt_duration_seconds_bucket{provider="bad"}',
      );
      assert.ok(buckets > 1, `the attempt-duration histogram has ${buckets} bucket series`);
      assert.equal(
        await prometheus.query(
          'sum(tracefetch_provider_attempt_duration_seconds_count{provider="good",outcome="success"})',
        ),
        SEARCHES,
      );
    });
  });
}
