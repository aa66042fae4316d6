/**
 * A span exporter over `fetch`, for Workers (docs/decisions.md, "Metrics and traces"): the official
 * OTLP/HTTP exporter sends through Node's http module or a browser's XHR, neither of which a Worker
 * has. It POSTs the OTLP/HTTP JSON encoding (the specification's `ExportTraceServiceRequest`) to
 * the traces endpoint, each request under a deadline.
 */
import { type Attributes, type HrTime, SpanStatusCode } from "@opentelemetry/api";
import { type ExportResult, ExportResultCode } from "@opentelemetry/core";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";
import { EXPORT_TIMEOUT_MS } from "./otel-tracing.ts";

type AnyValue = { stringValue: string } | { boolValue: boolean } | { intValue: string } | {
  doubleValue: number;
};

function valueOf(value: unknown): AnyValue {
  if (typeof value === "boolean") return { boolValue: value };
  if (typeof value === "number") {
    return Number.isInteger(value) ? { intValue: String(value) } : { doubleValue: value };
  }
  return { stringValue: String(value) };
}

function attributesOf(attributes: Attributes): Array<{ key: string; value: AnyValue }> {
  return Object.entries(attributes).filter(([, v]) => v !== undefined).map(([key, value]) => ({
    key,
    value: valueOf(value),
  }));
}

/** Nanoseconds since the epoch, as the decimal string OTLP JSON carries a fixed64 in. */
function nanos([seconds, nanoseconds]: HrTime): string {
  return (BigInt(seconds) * 1_000_000_000n + BigInt(nanoseconds)).toString();
}

/** The OTLP JSON body of one batch; every span of a tracer provider shares its resource. */
export function otlpJson(spans: ReadableSpan[]): string {
  const first = spans[0];
  return JSON.stringify({
    resourceSpans: first === undefined ? [] : [{
      resource: { attributes: attributesOf(first.resource.attributes) },
      scopeSpans: [{
        scope: { name: first.instrumentationScope.name },
        spans: spans.map((span) => ({
          traceId: span.spanContext().traceId,
          spanId: span.spanContext().spanId,
          ...(span.parentSpanContext ? { parentSpanId: span.parentSpanContext.spanId } : {}),
          name: span.name,
          // OTLP counts kinds from 1 (SPAN_KIND_INTERNAL); the API from 0.
          kind: span.kind + 1,
          startTimeUnixNano: nanos(span.startTime),
          endTimeUnixNano: nanos(span.endTime),
          attributes: attributesOf(span.attributes),
          status: span.status.code === SpanStatusCode.UNSET ? {} : { code: span.status.code },
        })),
      }],
    }],
  });
}

export class FetchSpanExporter implements SpanExporter {
  constructor(
    readonly endpoint: string,
    readonly headers: Record<string, string>,
    readonly send: typeof fetch = (input, init) => fetch(input, init),
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.send(this.endpoint, {
      method: "POST",
      headers: { ...this.headers, "content-type": "application/json" },
      body: otlpJson(spans),
      signal: AbortSignal.timeout(EXPORT_TIMEOUT_MS),
    }).then(async (response) => {
      await response.body?.cancel();
      done({ code: response.ok ? ExportResultCode.SUCCESS : ExportResultCode.FAILED });
    }, (error: unknown) => {
      done({ code: ExportResultCode.FAILED, error: error as Error });
    });
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}
