/**
 * The telemetry a Node or Deno root hands createGateway, from the settings: Prometheus metrics
 * unless TRACEFETCH_METRICS is off (scraped at `GET /metrics`), traces when an OTLP endpoint is set.
 */
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import type { SpanExporter } from "@opentelemetry/sdk-trace-base";
import type { Telemetry } from "../core/telemetry.ts";
import type { TelemetryVariables } from "../config/telemetry-settings.ts";
import { EXPORT_TIMEOUT_MS, OtelTracing } from "./otel-tracing.ts";
import { PrometheusMetrics } from "./prometheus-metrics.ts";

/** The official OTLP/HTTP trace exporter, sending JSON to the traces endpoint. */
export function otlpExporter(vars: TelemetryVariables, endpoint: string): SpanExporter {
  return new OTLPTraceExporter({
    url: endpoint,
    headers: vars.headers,
    timeoutMillis: EXPORT_TIMEOUT_MS,
  });
}

export function telemetryFor(
  vars: TelemetryVariables,
  onWarning: (line: string) => void = () => {},
  /** TRACEFETCH_TRACE_RAW_QUERIES: spans keep each query's text. */
  rawQueries = false,
): Telemetry {
  const endpoint = vars.tracesEndpoint;
  if (endpoint !== null && vars.protocol === "http/protobuf") {
    onWarning(
      "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf: traces are sent as http/json, which OTLP/HTTP receivers also accept (docs/decisions.md)",
    );
  }
  return {
    metrics: vars.metrics ? new PrometheusMetrics() : null,
    tracing: endpoint === null
      ? null
      : new OtelTracing(vars, otlpExporter(vars, endpoint), rawQueries),
  };
}
