/**
 * Acceptance (issue "Operators can see it"): with OTEL_EXPORTER_OTLP_ENDPOINT at a loopback
 * OTLP/HTTP receiver and OTEL_EXPORTER_OTLP_PROTOCOL=http/json or http/protobuf, searches sent with a caller
 * `traceparent` give server spans in the caller's trace, a client span per provider attempt, and
 * each provider is sent a traceparent naming its client span; the query appears in no span and no
 * metric. Runs unchanged under Node and `deno test`.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { gateway } from "./support/gateway.ts";
import { answer, startServer, type TestServer } from "./support/servers.ts";
import { type OtlpReceiver, startOtlpReceiver } from "./support/otlp-receiver.ts";
import { telemetryFor } from "../src/observe/telemetry-for.ts";
import { MAX_QUEUED_SPANS } from "../src/observe/otel-tracing.ts";
import { readSettings } from "../src/config/settings.ts";

const SEARCHES = 10;
const QUERY = "okapi-private-words";
const CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";
/** SpanKind in OTLP JSON: SERVER 2, CLIENT 3. */
const SERVER = 2;
const CLIENT = 3;

const CONTENT_TYPES = {
  "http/json": "application/json",
  "http/protobuf": "application/x-protobuf",
};

for (const protocol of ["http/json", "http/protobuf"] as const) {
  describe(`traces over OTLP/HTTP (${protocol})`, () => {
    let good: TestServer;
    let bad: TestServer;
    let receiver: OtlpReceiver;
    before(async () => {
      good = await startServer(
        answer("good", "good", [{ title: "A", locator: "https://a.example/1" }]),
      );
      bad = await startServer((_req, res) => {
        res.writeHead(500, { "content-type": "text/plain" });
        res.end("down");
      });
      receiver = await startOtlpReceiver();
    });
    after(async () => {
      await good.close();
      await bad.close();
      await receiver.close();
    });

    it("continues the caller's trace: a server span per search, a client span per attempt", async () => {
      const env = {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
        OTEL_SERVICE_NAME: "gateway-under-test",
        OTEL_BSP_SCHEDULE_DELAY: "50",
        TRACEFETCH_SUSPEND_PROVIDERS: "off",
      };
      const telemetry = telemetryFor(readSettings(env).env.telemetry);
      assert.ok(telemetry.tracing !== null);
      const app = gateway([
        { name: "good", endpoint: good.url },
        { name: "bad", endpoint: bad.url },
      ], { env, ports: { telemetry } });
      for (let i = 0; i < SEARCHES; i++) {
        const response = await app.request(`/v1/search?q=${QUERY}+${i}`, {
          headers: {
            traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`,
            tracestate: "vendor=opaque",
          },
        });
        assert.equal(response.status, 200);
        await response.body?.cancel();
      }
      await telemetry.tracing.flush();
      const servers = receiver.spans.filter((s) => s.kind === SERVER);
      assert.equal(servers.length, SEARCHES);
      for (const span of servers) {
        assert.equal(span.traceId, CALLER_TRACE);
        assert.equal(span.parentSpanId, CALLER_SPAN);
        assert.equal(span.name, "GET /v1/search");
        assert.equal(span.attributes["http.route"], "/v1/search");
        assert.equal(span.attributes["http.request.method"], "GET");
        // An int64 in OTLP JSON may be a number or a decimal string (proto3 JSON).
        assert.equal(Number(span.attributes["http.response.status_code"]), 200);
        assert.equal(span.status, 0);
        assert.equal(span.resource["service.name"], "gateway-under-test");
        const clients = receiver.spans.filter((s) =>
          s.kind === CLIENT && s.parentSpanId === span.spanId
        );
        assert.deepEqual(clients.map((c) => c.attributes["tracefetch.provider"]).sort(), [
          "bad",
          "good",
        ]);
        const failed = clients.find((c) => c.attributes["tracefetch.provider"] === "bad");
        assert.equal(failed?.attributes["tracefetch.outcome"], "search_failed");
        assert.equal(failed?.attributes["error.type"], failed?.attributes["tracefetch.code"]);
        // The HTTP semantic conventions: the response's status, and an error status on failure.
        assert.equal(Number(failed?.attributes["http.response.status_code"]), 500);
        assert.equal(failed?.status, 2);
        const answered = clients.find((c) => c.attributes["tracefetch.provider"] === "good");
        assert.equal(answered?.attributes["tracefetch.cached"], false);
        assert.equal(Number(answered?.attributes["http.response.status_code"]), 200);
        assert.equal(answered?.status, 0);
      }
      // Each provider request carried the traceparent of its own client span.
      const clientIds = new Set(
        receiver.spans.filter((s) => s.kind === CLIENT).map((s) =>
          `00-${s.traceId}-${s.spanId}-01`
        ),
      );
      const sent = [...good.requests, ...bad.requests].map((r) => r.headers.traceparent);
      assert.equal(sent.length, 2 * SEARCHES);
      for (const traceparent of sent) {
        assert.ok(clientIds.has(String(traceparent)), String(traceparent));
      }
      assert.ok(receiver.paths.every((p) => p === "/v1/traces"));
      assert.ok(receiver.types.every((t) => t === CONTENT_TYPES[protocol]), receiver.types.join());
      // Neither the query nor a locator is in any span, nor in any metric.
      for (const body of receiver.bodies) {
        assert.ok(!body.includes(QUERY) && !body.includes("a.example"));
      }
      const metrics = await (await app.request("/metrics")).text();
      assert.ok(!metrics.includes(QUERY));
      assert.equal(telemetry.tracing.status().failed, 0);
    });

    it("reads the standard variables: a traces endpoint of its own, headers, a sampler", () => {
      const vars = readSettings({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318/",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://127.0.0.1:9999/custom",
        OTEL_EXPORTER_OTLP_HEADERS: "api-key=a%20b,x-tenant=t1",
        OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
        OTEL_TRACES_SAMPLER_ARG: "0.25",
      }).env.telemetry;
      assert.equal(vars.tracesEndpoint, "http://127.0.0.1:9999/custom");
      assert.equal(vars.metricsEndpoint, "http://127.0.0.1:4318/v1/metrics");
      assert.deepEqual(vars.headers, { "api-key": "a b", "x-tenant": "t1" });
      assert.equal(vars.sampler, "parentbased_traceidratio");
      assert.equal(vars.samplerRatio, 0.25);
      // The specification's default encoding.
      assert.equal(readSettings({}).env.telemetry.protocol, "http/protobuf");
      assert.throws(
        () => readSettings({ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }),
        /OTEL_EXPORTER_OTLP_PROTOCOL/,
      );
      assert.throws(() => readSettings({ OTEL_EXPORTER_OTLP_HEADERS: "nokey" }), /not shown/);
    });
  });
}

describe("traces when the collector is down, or asked to keep queries", () => {
  let good: TestServer;
  before(async () => {
    good = await startServer(
      answer("good", "good", [{ title: "A", locator: "https://a.example/1" }]),
    );
  });
  after(() => good.close());

  it("never fails or holds a search; the failed export is counted in /v1/status", async () => {
    // A port nothing listens on: every export is refused.
    const closed = await startOtlpReceiver();
    await closed.close();
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: closed.url, OTEL_BSP_SCHEDULE_DELAY: "20" };
    const telemetry = telemetryFor(readSettings(env).env.telemetry);
    const app = gateway([{ name: "good", endpoint: good.url }], { env, ports: { telemetry } });
    for (let i = 0; i < 3; i++) {
      const response = await app.request(`/v1/search?q=down+${i}`);
      assert.equal(response.status, 200);
      await response.body?.cancel();
    }
    await telemetry.tracing?.flush();
    const status = await (await app.request("/v1/status")).json();
    const traces = status.result.traces;
    assert.equal(traces.state, "exporting");
    assert.equal(traces.exported, 0);
    // Refused exports are retried; a flush that outlasts its timeout leaves them queued, counted.
    assert.ok(traces.failed + traces.queued >= 3, JSON.stringify(traces));
    assert.ok(traces.queued <= MAX_QUEUED_SPANS);
  });

  it("leaves a caller's unsampled trace unsampled: providers get it, nothing is exported", async () => {
    const receiver = await startOtlpReceiver();
    try {
      const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url };
      const telemetry = telemetryFor(readSettings(env).env.telemetry);
      const app = gateway([{ name: "good", endpoint: good.url }], { env, ports: { telemetry } });
      const response = await app.request("/v1/search?q=unsampled", {
        headers: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-00` },
      });
      assert.equal(response.status, 200);
      await response.body?.cancel();
      await telemetry.tracing?.flush();
      assert.deepEqual(receiver.spans, []);
      const sent = String(good.requests.at(-1)?.headers.traceparent);
      assert.match(sent, new RegExp(`^00-${CALLER_TRACE}-[0-9a-f]{16}-00$`));
      assert.notEqual(sent.split("-")[2], CALLER_SPAN);
    } finally {
      await receiver.close();
    }
  });

  it("keeps the query in the server span only with TRACEFETCH_TRACE_RAW_QUERIES", async () => {
    const receiver = await startOtlpReceiver();
    try {
      for (const raw of [false, true]) {
        const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url };
        const telemetry = telemetryFor(readSettings(env).env.telemetry, raw);
        const app = gateway([{ name: "good", endpoint: good.url }], { env, ports: { telemetry } });
        await (await app.request(`/v1/search?q=${QUERY}-${raw}`)).body?.cancel();
        await telemetry.tracing?.flush();
      }
      const kept = receiver.spans.filter((s) => s.attributes["tracefetch.query"] !== undefined);
      assert.deepEqual(kept.map((s) => s.attributes["tracefetch.query"]), [`${QUERY}-true`]);
      assert.ok(!receiver.bodies.join("").includes(`${QUERY}-false`));
    } finally {
      await receiver.close();
    }
  });
});

describe("an MCP tool call's span", () => {
  it("is named tools/call {tool} with mcp.method.name, and parents the search's attempts", async () => {
    const good = await startServer(
      answer("good", "good", [{ title: "A", locator: "https://a.example/1" }]),
    );
    const receiver = await startOtlpReceiver();
    try {
      const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url };
      const telemetry = telemetryFor(readSettings(env).env.telemetry);
      const app = gateway([{ name: "good", endpoint: good.url }], { env, ports: { telemetry } });
      const response = await app.request("/mcp", {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`,
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "search", arguments: { query: QUERY } },
        }),
      });
      assert.equal(response.status, 200);
      await response.body?.cancel();
      await telemetry.tracing?.flush();
      const server = receiver.spans.find((s) => s.kind === SERVER);
      assert.equal(server?.name, "tools/call search");
      assert.equal(server?.attributes["mcp.method.name"], "tools/call");
      assert.equal(server?.attributes["http.route"], "/mcp");
      assert.equal(server?.traceId, CALLER_TRACE);
      const client = receiver.spans.find((s) => s.kind === CLIENT);
      assert.equal(client?.parentSpanId, server?.spanId);
      assert.ok(!receiver.bodies.join("").includes(QUERY));
    } finally {
      await receiver.close();
      await good.close();
    }
  });
});

describe("an expand's span", () => {
  it("is a client span of the request's, whose traceparent the provider is sent; no locator", async () => {
    const LOCATOR = "https://notes.example/hidden-page";
    const provider = await startServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({
        schema_version: "tracefetch.provider-expand.v1",
        provider: "notes",
        scope: "notes",
        locator: LOCATOR,
        title: "Notes",
        text: "Every call has a deadline.",
        content_type: "text/plain",
        retrieved_at: "2025-01-01T00:00:00Z",
      }));
    });
    const receiver = await startOtlpReceiver();
    try {
      const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url };
      const telemetry = telemetryFor(readSettings(env).env.telemetry);
      const app = gateway([{ name: "notes", endpoint: provider.url }], {
        env,
        ports: { telemetry },
      });
      const response = await app.request("/v1/expand", {
        method: "POST",
        headers: {
          "content-type": "application/json",
          traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`,
        },
        body: JSON.stringify({ provider: "notes", locator: LOCATOR }),
      });
      assert.equal(response.status, 200);
      await response.body?.cancel();
      await telemetry.tracing?.flush();
      const server = receiver.spans.find((s) => s.kind === SERVER);
      assert.equal(server?.name, "POST /v1/expand");
      assert.equal(server?.parentSpanId, CALLER_SPAN);
      const client = receiver.spans.find((s) => s.kind === CLIENT);
      assert.equal(client?.name, "expand notes");
      assert.equal(client?.parentSpanId, server?.spanId);
      assert.equal(client?.attributes["tracefetch.outcome"], "success");
      const sent = provider.requests.at(-1)?.headers.traceparent;
      assert.equal(sent, `00-${client?.traceId}-${client?.spanId}-01`);
      assert.ok(!receiver.bodies.join("").includes("hidden-page"));
    } finally {
      await receiver.close();
      await provider.close();
    }
  });
});
