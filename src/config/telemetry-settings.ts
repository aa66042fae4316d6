/**
 * The OpenTelemetry variables (docs/deploy.md, "Observing it"), read with the names and meanings
 * of the OpenTelemetry SDK specification, so an operator's existing settings work unchanged. A
 * message never echoes OTEL_EXPORTER_OTLP_HEADERS, which may carry a collector's key.
 */
import { type Env, flag, positive, readVariables, refuse, text, variable } from "./env-values.ts";

/** The samplers of the specification that a gateway can honour. */
export const SAMPLERS = [
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
] as const;
export type SamplerName = (typeof SAMPLERS)[number];

/** OTLP over HTTP only: gRPC needs HTTP/2 sockets no Worker has. */
export const OTLP_PROTOCOLS = ["http/json", "http/protobuf"] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

export type TelemetryVariables = {
  /** TRACEFETCH_METRICS: keep the metrics `GET /metrics` serves (on unless set off). */
  metrics: boolean;
  /** OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT + `/v1/traces`; null: no traces. */
  tracesEndpoint: string | null;
  /** OTEL_EXPORTER_OTLP_ENDPOINT + `/v1/metrics` (Workers push their metrics there); null: none. */
  metricsEndpoint: string | null;
  /** OTEL_EXPORTER_OTLP_HEADERS, as `key=value` pairs (values percent-decoded). */
  headers: Record<string, string>;
  /** OTEL_EXPORTER_OTLP_PROTOCOL; unset, the specification's default, http/protobuf. */
  protocol: OtlpProtocol;
  /** OTEL_SERVICE_NAME */
  serviceName: string;
  /** OTEL_TRACES_SAMPLER, and OTEL_TRACES_SAMPLER_ARG (a ratio in [0, 1]) for the ratio ones. */
  sampler: SamplerName;
  samplerRatio: number;
  /** OTEL_BSP_SCHEDULE_DELAY: milliseconds between batch exports. */
  scheduleDelayMs: number;
};

/** The specification's defaults. */
const DEFAULT_SERVICE_NAME = "tracefetch-edge";
const DEFAULT_SCHEDULE_DELAY_MS = 5_000;

const httpUrl = variable((value) => {
  if (value === null) return null;
  const parsed = URL.canParse(value) ? new URL(value) : null;
  if (parsed === null || !["http:", "https:"].includes(parsed.protocol)) {
    return refuse("must be an http:// or https:// URL such as http://127.0.0.1:4318");
  }
  return value;
});

const picklist = <T extends string>(names: readonly T[]) =>
  variable((value): T | null | { refused: string } => {
    if (value === null) return null;
    const name = value.toLowerCase() as T;
    return names.includes(name) ? name : refuse(`must be one of ${names.join(", ")}`);
  });

const headerList = variable((value) => {
  const headers: Record<string, string> = {};
  if (value === null) return headers;
  for (const pair of value.split(",")) {
    const at = pair.indexOf("=");
    const name = pair.slice(0, at).trim().toLowerCase();
    if (at <= 0 || !/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(name)) {
      return refuse("must be key=value pairs separated by commas (the value is not shown)");
    }
    try {
      headers[name] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      return refuse("has a value that is not percent-encoded correctly (the value is not shown)");
    }
  }
  return headers;
});

const ratio = variable((value) => {
  if (value === null) return null;
  const number = Number(value);
  return Number.isFinite(number) && number >= 0 && number <= 1
    ? number
    : refuse("must be a ratio from 0 to 1, such as 0.25");
});

const TELEMETRY_VARIABLES = {
  TRACEFETCH_METRICS: flag(true),
  OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: httpUrl,
  OTEL_EXPORTER_OTLP_HEADERS: headerList,
  OTEL_EXPORTER_OTLP_PROTOCOL: picklist(OTLP_PROTOCOLS),
  OTEL_SERVICE_NAME: text,
  OTEL_TRACES_SAMPLER: picklist(SAMPLERS),
  OTEL_TRACES_SAMPLER_ARG: ratio,
  OTEL_BSP_SCHEDULE_DELAY: positive,
};

/** The signal's path under OTEL_EXPORTER_OTLP_ENDPOINT, as the specification appends it. */
function under(base: string, signal: "traces" | "metrics"): string {
  return `${base.replace(/\/+$/, "")}/v1/${signal}`;
}

export function telemetryVariables(env: Env): TelemetryVariables {
  const read = readVariables(env, TELEMETRY_VARIABLES);
  const base = read.OTEL_EXPORTER_OTLP_ENDPOINT;
  return {
    metrics: read.TRACEFETCH_METRICS,
    tracesEndpoint: read.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
      (base === null ? null : under(base, "traces")),
    metricsEndpoint: base === null ? null : under(base, "metrics"),
    headers: read.OTEL_EXPORTER_OTLP_HEADERS,
    protocol: read.OTEL_EXPORTER_OTLP_PROTOCOL ?? "http/protobuf",
    serviceName: read.OTEL_SERVICE_NAME ?? DEFAULT_SERVICE_NAME,
    sampler: read.OTEL_TRACES_SAMPLER ?? "parentbased_always_on",
    samplerRatio: read.OTEL_TRACES_SAMPLER_ARG ?? 1,
    scheduleDelayMs: read.OTEL_BSP_SCHEDULE_DELAY ?? DEFAULT_SCHEDULE_DELAY_MS,
  };
}
