/**
 * Traces from workerd (docs/deploy.md, "Observing it"): with OTEL_EXPORTER_OTLP_ENDPOINT at a
 * loopback OTLP/HTTP receiver (http/protobuf, the default), a search sent with a caller traceparent gives a server span in the
 * caller's trace and a client span per provider attempt, exported inside waitUntil after the
 * answer; the provider is sent its client span's traceparent; the metrics are pushed to
 * `/v1/metrics` instead of scraped.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Miniflare } from "miniflare";
import { answer, startServer, type TestServer } from "../support/servers.ts";
import { manifestOf } from "../support/gateway.ts";
import { type OtlpReceiver, startOtlpReceiver } from "../support/otlp-receiver.ts";
import { startWorker } from "./miniflare.ts";

const CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";
const QUERY = "workerd-private-words";
/** waitUntil's export lands within milliseconds on loopback; this bounds a broken one. */
const EXPORTED_WITHIN_MS = 5_000;

describe("traces from workerd", () => {
  let provider: TestServer;
  let receiver: OtlpReceiver;
  let mf: Miniflare;
  before(async () => {
    provider = await startServer(answer("a", "a", [{ title: "A", locator: "https://a.example/" }]));
    receiver = await startOtlpReceiver();
    mf = await startWorker({
      TRACEFETCH_MANIFEST: JSON.stringify(manifestOf([{ name: "a", endpoint: provider.url }])),
      TRACEFETCH_ALLOW_LOOPBACK: "true",
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_SERVICE_NAME: "edge-under-test",
    });
  });
  after(async () => {
    await mf?.dispose();
    await provider.close();
    await receiver.close();
  });

  it("a server span in the caller's trace, a client span per attempt, exported in waitUntil", async () => {
    const response = await mf.dispatchFetch(`http://gateway.test/v1/search?q=${QUERY}`, {
      headers: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
    });
    assert.equal(response.status, 200);
    await response.text();
    const deadline = performance.now() + EXPORTED_WITHIN_MS;
    while (receiver.spans.length < 2 && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const server = receiver.spans.find((s) => s.kind === 2);
    const client = receiver.spans.find((s) => s.kind === 3);
    assert.equal(server?.traceId, CALLER_TRACE);
    assert.equal(server?.parentSpanId, CALLER_SPAN);
    assert.equal(server?.attributes["http.route"], "/v1/search");
    // An int64 in OTLP JSON may be a number or a decimal string (proto3 JSON).
    assert.equal(Number(server?.attributes["http.response.status_code"]), 200);
    assert.equal(server?.resource["service.name"], "edge-under-test");
    assert.equal(client?.parentSpanId, server?.spanId);
    assert.equal(client?.attributes["tracefetch.provider"], "a");
    assert.equal(client?.attributes["tracefetch.outcome"], "success");
    assert.equal(Number(client?.attributes["http.response.status_code"]), 200);
    // OTEL_EXPORTER_OTLP_PROTOCOL unset: the specification's default, protobuf, from workerd too.
    assert.equal(receiver.types[receiver.paths.indexOf("/v1/traces")], "application/x-protobuf");
    // The search's request, found by its query: the gateway's describe call of the provider, sent
    // in waitUntil, may land after it on a loaded machine.
    const sent = provider.requests.find((r) => r.body.includes(QUERY))?.headers.traceparent;
    assert.equal(sent, `00-${client?.traceId}-${client?.spanId}-01`);
    assert.ok(!receiver.bodies.join("").includes(QUERY));
  });

  it("pushes the same metrics to /v1/metrics over OTLP, and serves no /metrics", async () => {
    const deadline = performance.now() + EXPORTED_WITHIN_MS;
    while (!receiver.paths.includes("/v1/metrics") && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const at = receiver.paths.indexOf("/v1/metrics");
    assert.ok(at >= 0, "a push to /v1/metrics");
    const pushed = JSON.parse(receiver.bodies[at] as string);
    const metrics = pushed.resourceMetrics[0].scopeMetrics[0].metrics as Array<
      { name: string; sum?: { dataPoints: Array<{ asDouble: number }> }; histogram?: unknown }
    >;
    const named = (name: string) => metrics.find((m) => m.name === name);
    assert.equal(named("tracefetch_searches_total")?.sum?.dataPoints[0]?.asDouble, 1);
    assert.equal(named("tracefetch_provider_attempts_total")?.sum?.dataPoints[0]?.asDouble, 1);
    assert.ok(named("tracefetch_provider_attempt_duration_seconds")?.histogram);
    assert.ok(!receiver.bodies[at]?.includes(QUERY));
    const scrape = await mf.dispatchFetch("http://gateway.test/metrics");
    assert.equal(scrape.status, 404);
    await scrape.text();
  });
});
