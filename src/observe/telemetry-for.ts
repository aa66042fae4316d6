/**
 * The telemetry a Node or Deno root hands createGateway, from the settings: Prometheus metrics
 * unless TRACEFETCH_METRICS is off (scraped at `GET /metrics`), traces when an OTLP endpoint is set.
 */
import type { SpanExporter } from "@opentelemetry/sdk-trace-base";
import type { Telemetry } from "../core/telemetry.ts";
import type { TelemetryVariables } from "../config/telemetry-settings.ts";
import { EXPORT_TIMEOUT_MS, OtelTracing } from "./otel-tracing.ts";
import { OnDemandExporter } from "./on-demand-exporter.ts";
import { PrometheusMetrics } from "./prometheus-metrics.ts";

/**
 * The official OTLP/HTTP trace exporter for OTEL_EXPORTER_OTLP_PROTOCOL (`http/protobuf` or
 * `http/json`), each its own package, loaded with the first export: a gateway that traces nothing
 * never loads either.
 */
export function otlpExporter(vars: TelemetryVariables, endpoint: string): SpanExporter {
  const config = { url: endpoint, headers: vars.headers, timeoutMillis: EXPORT_TIMEOUT_MS };
  switch (vars.protocol) {
    case "http/protobuf":
      return new OnDemandExporter(async () => {
        const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-proto");
        return new OTLPTraceExporter(config);
      });
    case "http/json":
      return new OnDemandExporter(async () => {
        const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-http");
        return new OTLPTraceExporter(config);
      });
    default: {
      const never: never = vars.protocol;
      throw new Error(`unknown OTLP protocol ${never}`);
    }
  }
}

export function telemetryFor(
  vars: TelemetryVariables,
  /** TRACEFETCH_TRACE_RAW_QUERIES: spans keep each query's text. */
  rawQueries = false,
): Telemetry {
  const endpoint = vars.tracesEndpoint;
  return {
    metrics: vars.metrics ? new PrometheusMetrics() : null,
    tracing: endpoint === null
      ? null
      : new OtelTracing(vars, otlpExporter(vars, endpoint), rawQueries),
  };
}
