/**
 * The tracing port over the OpenTelemetry SDK (docs/deploy.md, "Observing it"): a server span per
 * request that continues the caller's `traceparent` and `tracestate`, a client span per provider
 * attempt whose traceparent the provider is sent, exported over OTLP/HTTP in batches from a
 * bounded queue. A collector that is down costs that queue and a count in `/v1/status`, never a
 * search's time.
 */
import { type Context, ROOT_CONTEXT, type Span, SpanKind, trace } from "@opentelemetry/api";
import { ExportResultCode, W3CTraceContextPropagator } from "@opentelemetry/core";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  type ReadableSpan,
  type Sampler,
  type SpanExporter,
  type SpanProcessor,
  TraceIdRatioBasedSampler,
} from "@opentelemetry/sdk-trace-base";
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_SERVICE_NAME,
} from "@opentelemetry/semantic-conventions";
import type {
  AttemptSeen,
  AttemptSpan,
  RequestTrace,
  ServerSpan,
  TracingPort,
} from "../core/telemetry.ts";
import type { SamplerName, TelemetryVariables } from "../config/telemetry-settings.ts";

/**
 * Spans waiting for export at most (the SDK's default queue): past it a span is dropped and
 * counted, so a collector that is down costs this much memory and no more.
 */
export const MAX_QUEUED_SPANS = 2_048;
/** Spans in one export request: the SDK's default batch. */
export const MAX_EXPORT_BATCH = 512;
/** One export may take this long before it counts as failed: well inside a Worker's waitUntil. */
export const EXPORT_TIMEOUT_MS = 10_000;

/** What the tracer exports through: the official OTLP/HTTP exporter, or a test's. */
export type ExporterFactory = (vars: TelemetryVariables) => SpanExporter;

const propagator = new W3CTraceContextPropagator();
const headerGetter = {
  get: (headers: Headers, key: string) => headers.get(key) ?? undefined,
  keys: (headers: Headers) => [...headers.keys()],
};

function samplerOf(name: SamplerName, ratio: number): Sampler {
  switch (name) {
    case "always_on":
      return new AlwaysOnSampler();
    case "always_off":
      return new AlwaysOffSampler();
    case "traceidratio":
      return new TraceIdRatioBasedSampler(ratio);
    case "parentbased_always_on":
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case "parentbased_always_off":
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case "parentbased_traceidratio":
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
    default: {
      const never: never = name;
      throw new Error(`unknown sampler ${never}`);
    }
  }
}

/** The counts `/v1/status` shows, kept around the SDK's exporter and batch processor. */
class Counted {
  queued = 0;
  dropped = 0;
  exported = 0;
  failed = 0;
}

/** The exporter, counting what it exported and what failed. */
function countingExporter(inner: SpanExporter, counts: Counted): SpanExporter {
  return {
    export(spans, done) {
      inner.export(spans, (result) => {
        counts.queued -= spans.length;
        if (result.code === ExportResultCode.SUCCESS) counts.exported += spans.length;
        else counts.failed += spans.length;
        done(result);
      });
    },
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
  };
}

/** The batch processor behind a queue bound of our own, which counts what it drops. */
function boundedProcessor(inner: SpanProcessor, counts: Counted): SpanProcessor {
  return {
    onStart: (span, parent) => inner.onStart(span, parent),
    onEnd(span: ReadableSpan) {
      if ((span.spanContext().traceFlags & 1) === 0) return;
      if (counts.queued >= MAX_QUEUED_SPANS) {
        counts.dropped++;
        return;
      }
      counts.queued++;
      inner.onEnd(span);
    },
    forceFlush: () => inner.forceFlush(),
    shutdown: () => inner.shutdown(),
  };
}

function traceparentOf(span: Span): string {
  const { traceId, spanId, traceFlags } = span.spanContext();
  return `00-${traceId}-${spanId}-${(traceFlags & 1) === 1 ? "01" : "00"}`;
}

/**
 * The global context manager is never set: every span's parent is passed explicitly, so the same
 * code runs on Workers without AsyncLocalStorage.
 */
export class OtelTracing implements TracingPort {
  readonly #provider: BasicTracerProvider;
  readonly #tracer;
  readonly #counts = new Counted();

  /** TRACEFETCH_TRACE_RAW_QUERIES: the server span keeps the query's text. */
  readonly #rawQueries: boolean;

  constructor(vars: TelemetryVariables, exporter: SpanExporter, rawQueries = false) {
    this.#rawQueries = rawQueries;
    const counts = this.#counts;
    const batch = new BatchSpanProcessor(countingExporter(exporter, counts), {
      maxQueueSize: MAX_QUEUED_SPANS,
      maxExportBatchSize: MAX_EXPORT_BATCH,
      scheduledDelayMillis: vars.scheduleDelayMs,
      exportTimeoutMillis: EXPORT_TIMEOUT_MS,
    });
    this.#provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: vars.serviceName }),
      sampler: samplerOf(vars.sampler, vars.samplerRatio),
      spanProcessors: [boundedProcessor(batch, counts)],
    });
    this.#tracer = this.#provider.getTracer("tracefetch-edge");
  }

  serve(request: { method: string; route: string; headers: Headers }): ServerSpan {
    const parent = propagator.extract(ROOT_CONTEXT, request.headers, headerGetter);
    const span = this.#tracer.startSpan(`${request.method} ${request.route}`, {
      kind: SpanKind.SERVER,
      attributes: {
        [ATTR_HTTP_REQUEST_METHOD]: request.method,
        [ATTR_HTTP_ROUTE]: request.route,
      },
    }, parent);
    const within = trace.setSpan(parent, span);
    return {
      trace: this.#requestTrace(within, span),
      rename(name, attributes) {
        span.updateName(name);
        span.setAttributes(attributes);
      },
      end(status) {
        span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
        if (status >= 500) span.setAttribute(ATTR_ERROR_TYPE, String(status));
        span.end();
      },
    };
  }

  #requestTrace(within: Context, server: Span): RequestTrace {
    const tracer = this.#tracer;
    const rawQueries = this.#rawQueries;
    return {
      query(text) {
        if (rawQueries) server.setAttribute("tracefetch.query", text);
      },
      attempt(provider, kind): AttemptSpan {
        const span = tracer.startSpan(`${kind} ${provider}`, {
          kind: SpanKind.CLIENT,
          attributes: { "tracefetch.provider": provider },
        }, within);
        return {
          traceparent: traceparentOf(span),
          end(seen: AttemptSeen) {
            span.setAttributes({
              "tracefetch.outcome": seen.outcome,
              "tracefetch.code": seen.code,
              "tracefetch.cached": seen.cached,
            });
            if (seen.outcome !== "success") span.setAttribute(ATTR_ERROR_TYPE, seen.code);
            span.end();
          },
        };
      },
    };
  }

  status(): { queued: number; dropped: number; exported: number; failed: number } {
    const { queued, dropped, exported, failed } = this.#counts;
    return { queued, dropped, exported, failed };
  }

  async flush(): Promise<void> {
    await this.#provider.forceFlush().catch(() => {});
  }
}
