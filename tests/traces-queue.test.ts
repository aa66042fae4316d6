/**
 * The span export queue when the collector is slow (docs/deploy.md, "Traces: OTLP/HTTP"): more
 * spans than MAX_QUEUED_SPANS are produced while the receiver holds every export; the queue stays
 * within its bound, one export is in flight at a time, the spans past the bound are counted as
 * dropped in `/v1/status`, and searches are answered while the exports are still held. Bounded:
 * one test, a few thousand spans made in process, three searches. Runs unchanged under
 * `deno test`.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { gateway } from "./support/gateway.ts";
import { answer, startServer, type TestServer } from "./support/servers.ts";
import { type OtlpReceiver, startOtlpReceiver } from "./support/otlp-receiver.ts";
import { telemetryFor } from "../src/observe/telemetry-for.ts";
import { MAX_EXPORT_BATCH, MAX_QUEUED_SPANS } from "../src/observe/otel-tracing.ts";
import { readSettings } from "../src/config/settings.ts";

/** Requests made straight on the tracer: each a server span and three attempts' client spans. */
const REQUESTS = 1_500;
const SPANS_PER_REQUEST = 4;
/** The receiver holds each export this long: longer than the whole test takes to fill the queue. */
const HELD_MS = 3_000;
const SEARCHES = 3;
/** Past the held export, the queue drains within this on loopback; it bounds a broken drain. */
const RECOVERED_WITHIN_MS = 5_000;

describe("the span export queue with a slow collector", () => {
  let good: TestServer;
  let receiver: OtlpReceiver;
  before(async () => {
    good = await startServer(
      answer("good", "good", [{ title: "A", locator: "https://a.example/" }]),
    );
    receiver = await startOtlpReceiver();
  });
  after(async () => {
    await good.close();
    await receiver.close();
  });

  it("stays within its bound, counts what it drops, and never holds a search", async () => {
    receiver.delayMs = HELD_MS;
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "10" };
    const telemetry = telemetryFor(readSettings(env).env.telemetry);
    const tracing = telemetry.tracing;
    assert.ok(tracing !== null);
    const app = gateway([{ name: "good", endpoint: good.url }], { env, ports: { telemetry } });

    const seen = { most: 0 };
    const headers = new Headers();
    for (let i = 0; i < REQUESTS; i++) {
      const server = tracing.serve({ method: "GET", route: "/v1/search", headers });
      for (let a = 0; a < SPANS_PER_REQUEST - 1; a++) {
        server.trace.attempt(`p${a}`, "search").end({
          provider: `p${a}`,
          outcome: "success",
          code: "ok",
          latencyMs: 1,
          costMicros: 0,
          cached: false,
          bytes: 0,
        });
      }
      server.end(200);
      seen.most = Math.max(seen.most, tracing.status().queued);
      // Let the batch processor's timers run now and then, as a serving process would.
      if (i % 100 === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    }
    const made = REQUESTS * SPANS_PER_REQUEST;
    assert.ok(made > MAX_QUEUED_SPANS + MAX_EXPORT_BATCH, "more spans than the queue holds");

    // Searches while the collector holds an export: answered, not made to wait for it.
    for (let i = 0; i < SEARCHES; i++) {
      const response = await app.request(`/v1/search?q=held+${i}`);
      assert.equal(response.status, 200);
      await response.body?.cancel();
      assert.ok(receiver.held.now >= 1, "the export is still held when the search is answered");
    }

    const status = (await (await app.request("/v1/status")).json()).result.traces;
    assert.ok(status.queued <= MAX_QUEUED_SPANS, JSON.stringify(status));
    assert.ok(seen.most <= MAX_QUEUED_SPANS, `queued at most ${seen.most}`);
    assert.ok(status.dropped >= made - MAX_QUEUED_SPANS, JSON.stringify(status));
    // Every span ended is accounted for: queued (an export under way included), sent, or dropped.
    const ended = made + SEARCHES * 2;
    assert.equal(status.queued + status.dropped + status.exported + status.failed, ended);
    // One export at a time: a slow collector never piles up requests, nor their batches.
    assert.equal(receiver.held.most, 1);

    // The collector recovers: the held export lands, and what is queued goes out.
    receiver.delayMs = 0;
    const deadline = performance.now() + HELD_MS + RECOVERED_WITHIN_MS;
    while (tracing.status().queued > 0 && performance.now() < deadline) {
      await tracing.flush();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const after = tracing.status();
    assert.ok(after.exported > 0 && after.queued === 0, JSON.stringify(after));
  });
});
