/**
 * The tracing port over the OpenTelemetry SDK (docs/deploy.md, "Observing it"): a server span per
 * request that continues the caller's `traceparent` and `tracestate`, a client span per provider
 * attempt whose traceparent the provider is sent, exported over OTLP/HTTP in batches from a
 * bounded queue. A collector that is down costs that queue and a count in `/v1/status`, never a
 * search's time.
 *
 * What a request pays is a sampler decision and a few field writes per span (recorded-span.ts):
 * the SDK's sampler decides once per request, its batch processor queues and batches, and the
 * official exporter serializes, always in a timer of its own, never inside a request
 * (docs/decisions.md, "Metrics and traces").
 */
import { ROOT_CONTEXT, SpanKind, trace } from "@opentelemetry/api";
import { ExportResultCode, parseTraceParent, TraceState } from "@opentelemetry/core";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  SamplingDecision,
  type SpanExporter,
  TraceIdRatioBasedSampler,
} from "@opentelemetry/sdk-trace-base";
import {
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_SERVICE_NAME,
} from "@opentelemetry/semantic-conventions";
import type {
  AttemptSeen,
  AttemptSpan,
  ClientSpan,
  ClientSpanEnd,
  RequestTrace,
  ServerSpan,
  TracingPort,
} from "../core/telemetry.ts";
import type { SamplerName, TelemetryVariables } from "../config/telemetry-settings.ts";
import { localContext, randomHex, RecordedSpan, type SpanOrigin } from "./recorded-span.ts";

/**
 * Spans waiting for export at most (the SDK's default queue), those in an export under way
 * included: past it a span is dropped and counted, so a collector that is down or slow costs this
 * much memory and no more.
 */
export const MAX_QUEUED_SPANS = 2_048;
/** Spans in one export request: the SDK's default batch. */
export const MAX_EXPORT_BATCH = 512;
/** One export may take this long before it counts as failed: well inside a Worker's waitUntil. */
export const EXPORT_TIMEOUT_MS = 10_000;

/** What the tracer exports through: the official OTLP/HTTP exporter, or a test's. */
export type ExporterFactory = (vars: TelemetryVariables) => SpanExporter;

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

/** The counts `/v1/status` shows: spans queued (exports under way included), dropped, sent. */
class Counted {
  queued = 0;
  dropped = 0;
  exported = 0;
  failed = 0;
  /** Exports started and not yet answered, which a flush waits for too. */
  readonly inFlight = new Set<Promise<void>>();
}

/**
 * The exporter as the batch processor calls it: counted, and started in a timer of its own, so a
 * batch that fills up at the end of a request is serialized after that request, not inside it.
 */
function deferredExporter(inner: SpanExporter, counts: Counted): SpanExporter {
  return {
    export(spans, done) {
      const exported = new Promise<void>((answered) => {
        setTimeout(() => {
          inner.export(spans, (result) => {
            counts.queued -= spans.length;
            if (result.code === ExportResultCode.SUCCESS) counts.exported += spans.length;
            else counts.failed += spans.length;
            answered();
            done(result);
          });
        }, 0);
      });
      counts.inFlight.add(exported);
      void exported.then(() => counts.inFlight.delete(exported));
    },
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
  };
}

/** What a request's spans share: their tracer's resource and scope, and where they end up. */
type Sink = { origin: SpanOrigin; finished: (span: RecordedSpan) => void };

type Scalar = string | number | boolean;

/**
 * A sampled request's server span and its trace. Classes, not closures: a request creates a few
 * of these, and a closure costs an allocation per method (more under tsx, which names each one).
 */
class Served implements ServerSpan, RequestTrace {
  constructor(readonly sink: Sink, readonly span: RecordedSpan, readonly rawQueries: boolean) {}

  get trace(): RequestTrace {
    return this;
  }

  rename(name: string, attributes: Record<string, string>): void {
    this.span.name = name;
    Object.assign(this.span.attributes, attributes);
  }

  end(status: number): void {
    this.span.attributes[ATTR_HTTP_RESPONSE_STATUS_CODE] = status;
    // A server span is an error only for a 5xx (the HTTP semantic conventions).
    if (status >= 500) this.span.fail(String(status));
    this.sink.finished(this.span);
  }

  query(text: string): void {
    if (this.rawQueries) this.span.attributes["tracefetch.query"] = text;
  }

  #client(name: string, attributes: Record<string, Scalar>): RecordedSpan {
    const within = this.span.spanContext();
    return new RecordedSpan(
      this.sink.origin,
      SpanKind.CLIENT,
      name,
      localContext(within.traceId, true, within.traceState),
      within,
      attributes,
    );
  }

  attempt(provider: string, kind: "search" | "expand"): AttemptSpan {
    const span = this.#client(`${kind} ${provider}`, { "tracefetch.provider": provider });
    return new Attempted(this.sink, span);
  }

  client(name: string, attributes: Record<string, Scalar>): ClientSpan {
    return new Client(this.sink, this.#client(name, { ...attributes }));
  }
}

/** The HTTP semantic conventions' attribute, on a client span whose request got an answer. */
function responded(span: RecordedSpan, status: number): void {
  span.attributes[ATTR_HTTP_RESPONSE_STATUS_CODE] = status;
}

class Attempted implements AttemptSpan {
  readonly traceparent: string;
  constructor(readonly sink: Sink, readonly span: RecordedSpan) {
    this.traceparent = span.traceparent;
  }

  responded(status: number): void {
    responded(this.span, status);
  }

  end(seen: AttemptSeen): void {
    const { attributes } = this.span;
    attributes["tracefetch.outcome"] = seen.outcome;
    attributes["tracefetch.code"] = seen.code;
    attributes["tracefetch.cached"] = seen.cached;
    if (seen.outcome !== "success") this.span.fail(seen.code);
    this.sink.finished(this.span);
  }
}

class Client implements ClientSpan {
  readonly traceparent: string;
  constructor(readonly sink: Sink, readonly span: RecordedSpan) {
    this.traceparent = span.traceparent;
  }

  responded(status: number): void {
    responded(this.span, status);
  }

  end(seen: ClientSpanEnd): void {
    const { attributes } = this.span;
    if (seen.attributes !== undefined) Object.assign(attributes, seen.attributes);
    if (seen.error !== undefined) this.span.fail(seen.error);
    this.sink.finished(this.span);
  }
}

/** A request's span when the sampler said no: providers still get the trace, nothing is kept. */
class Unsampled implements RequestTrace, AttemptSpan, ClientSpan {
  constructor(readonly traceId: string) {}
  get traceparent(): string {
    return `00-${this.traceId}-${randomHex(8)}-00`;
  }
  attempt(): AttemptSpan {
    return this;
  }
  client(): ClientSpan {
    return this;
  }
  query(): void {}
  responded(): void {}
  end(): void {}
}

/**
 * The global context manager is never set: every span's parent is passed explicitly, so the same
 * code runs on Workers without AsyncLocalStorage.
 */
export class OtelTracing implements TracingPort {
  readonly #sampler: Sampler;
  readonly #batch: BatchSpanProcessor;
  readonly #counts = new Counted();
  /** Where finished spans go: queued, or counted dropped when the queue is full. */
  readonly #sink: Sink;

  /** TRACEFETCH_TRACE_RAW_QUERIES: the server span keeps the query's text. */
  readonly #rawQueries: boolean;

  constructor(vars: TelemetryVariables, exporter: SpanExporter, rawQueries = false) {
    this.#rawQueries = rawQueries;
    this.#sampler = samplerOf(vars.sampler, vars.samplerRatio);
    this.#batch = new BatchSpanProcessor(deferredExporter(exporter, this.#counts), {
      // Our own count bounds the queue, exports under way included: the processor's never binds.
      maxQueueSize: MAX_QUEUED_SPANS,
      maxExportBatchSize: MAX_EXPORT_BATCH,
      scheduledDelayMillis: vars.scheduleDelayMs,
      exportTimeoutMillis: EXPORT_TIMEOUT_MS,
    });
    const [counts, batch] = [this.#counts, this.#batch];
    this.#sink = {
      origin: {
        resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: vars.serviceName }),
        scope: { name: "tracefetch-edge" },
      },
      finished(span) {
        if (!span.end()) return;
        if (counts.queued >= MAX_QUEUED_SPANS) {
          counts.dropped++;
          return;
        }
        counts.queued++;
        batch.onEnd(span);
      },
    };
  }

  serve(request: { method: string; route: string; headers: Headers }): ServerSpan {
    const header = request.headers.get("traceparent");
    const parent = header === null ? null : parseTraceParent(header);
    if (parent !== null) {
      parent.isRemote = true;
      const state = request.headers.get("tracestate");
      if (state !== null) parent.traceState = new TraceState(state);
    }
    const traceId = parent?.traceId ?? randomHex(16);
    const name = `${request.method} ${request.route}`;
    const attributes = {
      [ATTR_HTTP_REQUEST_METHOD]: request.method,
      [ATTR_HTTP_ROUTE]: request.route,
    };
    const decided = this.#sampler.shouldSample(
      parent === null ? ROOT_CONTEXT : trace.setSpanContext(ROOT_CONTEXT, parent),
      traceId,
      name,
      SpanKind.SERVER,
      attributes,
      [],
    );
    if (decided.decision !== SamplingDecision.RECORD_AND_SAMPLED) return unsampledServer(traceId);
    const traceState = decided.traceState ?? parent?.traceState;
    const span = new RecordedSpan(
      this.#sink.origin,
      SpanKind.SERVER,
      name,
      localContext(traceId, true, traceState),
      parent ?? undefined,
      { ...attributes, ...decided.attributes },
    );
    return new Served(this.#sink, span, this.#rawQueries);
  }

  status(): { queued: number; dropped: number; exported: number; failed: number } {
    const { queued, dropped, exported, failed } = this.#counts;
    return { queued, dropped, exported, failed };
  }

  /** Exports what is queued, and waits for that and for any export already under way. */
  async flush(): Promise<void> {
    const underWay = [...this.#counts.inFlight];
    await Promise.all([this.#batch.forceFlush().catch(() => {}), ...underWay]);
  }
}

/** A request the sampler left out: its providers are sent the trace, marked not sampled. */
function unsampledServer(traceId: string): ServerSpan {
  return { trace: new Unsampled(traceId), rename() {}, end() {} };
}
