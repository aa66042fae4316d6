/**
 * The telemetry a Worker is built with when an OTLP endpoint is set: traces through the SDK and a
 * fetch exporter, and the metrics pushed to the endpoint's `/v1/metrics` (otlp-metrics.ts), both
 * inside the request's `waitUntil`. A module of its own, loaded only when configured, so the
 * worker's main module never carries the SDK.
 */
import type { Telemetry } from "../core/telemetry.ts";
import type { TelemetryVariables } from "../config/telemetry-settings.ts";
import { FetchSpanExporter } from "./fetch-span-exporter.ts";
import { OtelTracing } from "./otel-tracing.ts";
import { OtlpMetrics } from "./otlp-metrics.ts";

export function workerTelemetry(
  vars: TelemetryVariables,
  rawQueries: boolean,
): { telemetry: Telemetry; flush: () => Promise<void> } {
  const traces = vars.tracesEndpoint;
  const tracing = traces === null
    ? null
    : new OtelTracing(vars, new FetchSpanExporter(traces, vars.headers, vars.protocol), rawQueries);
  const metrics = vars.metricsEndpoint === null || !vars.metrics
    ? null
    : new OtlpMetrics(vars.metricsEndpoint, vars.headers, vars.serviceName);
  return {
    telemetry: { metrics, tracing },
    flush: async () => {
      await Promise.all([tracing?.flush(), metrics?.push()]);
    },
  };
}
