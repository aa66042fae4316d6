/**
 * The telemetry a Worker is built with when an OTLP endpoint is set: traces through the SDK and a
 * fetch exporter, flushed inside the request's `waitUntil`. A module of its own, loaded only when
 * configured, so the worker's main module never carries the SDK. A Worker keeps no metrics
 * registry (no one scrapes an isolate).
 */
import type { Telemetry } from "../core/telemetry.ts";
import type { TelemetryVariables } from "../config/telemetry-settings.ts";
import { FetchSpanExporter } from "./fetch-span-exporter.ts";
import { OtelTracing } from "./otel-tracing.ts";

export function workerTelemetry(vars: TelemetryVariables, rawQueries: boolean): Telemetry {
  const endpoint = vars.tracesEndpoint;
  if (endpoint === null) return { metrics: null, tracing: null };
  return {
    metrics: null,
    tracing: new OtelTracing(vars, new FetchSpanExporter(endpoint, vars.headers), rawQueries),
  };
}
