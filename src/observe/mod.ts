/**
 * Observe: the adapters behind src/core's telemetry ports (docs/deploy.md, "Observing it"):
 * Prometheus metrics over prom-client, and traces over the OpenTelemetry SDK and its OTLP/HTTP
 * exporter. A root builds them from the settings and hands them to createGateway as a port.
 *
 * Boundary: nothing here decides anything about a search; it counts and exports what the gateway
 * reports.
 *
 * Invariants:
 * - No label or span attribute carries a query, a locator, a URL path, a caller or a token (a
 *   span carries the query only with TRACEFETCH_TRACE_RAW_QUERIES).
 * - Exporting happens in the background, batched, into a bounded queue: a collector that is down
 *   never delays or fails a search.
 */
export * from "./prometheus-metrics.ts";
export * from "./otel-tracing.ts";
export * from "./telemetry-for.ts";
export * from "./duration-buckets.ts";
export * from "./otlp-metrics.ts";
