/**
 * A finished span as the OTLP exporters read it (the SDK's `ReadableSpan`), recorded with a few
 * field writes: a request's spans cost no SDK span objects, attribute validation or span
 * processor chain on its path (docs/decisions.md, "Metrics and traces"). Times are kept as
 * `performance.now()` readings and become OTLP's HrTime only when a batch is exported.
 */
import {
  type Attributes,
  type HrTime,
  type Link,
  type SpanContext,
  SpanKind,
  type SpanStatus,
  SpanStatusCode,
  TraceFlags,
  type TraceState,
} from "@opentelemetry/api";
import { hrTime, hrTimeDuration, type InstrumentationScope } from "@opentelemetry/core";
import type { Resource } from "@opentelemetry/resources";
import type { ReadableSpan, TimedEvent } from "@opentelemetry/sdk-trace-base";

const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));

/**
 * Random bytes drawn ahead for span and trace ids: one getRandomValues call costs about as much
 * for 4 KiB as for 8 bytes, so spans take their ids from a pool refilled every few hundred spans.
 */
const RANDOM_POOL_BYTES = 4096;
let pool = new Uint8Array(0);
let pooled = 0;

/** `bytes` random bytes as lowercase hex (8 for a span id, 16 for a trace id). */
export function randomHex(bytes: number): string {
  if (pooled + bytes > pool.length) {
    pool = crypto.getRandomValues(new Uint8Array(RANDOM_POOL_BYTES));
    pooled = 0;
  }
  let out = "";
  for (let i = pooled; i < pooled + bytes; i++) out += HEX[pool[i] as number];
  pooled += bytes;
  return out;
}

/** What every span of one tracer shares. */
export type SpanOrigin = { resource: Resource; scope: InstrumentationScope };

const UNSET: SpanStatus = { code: SpanStatusCode.UNSET };
const NONE: never[] = [];

export class RecordedSpan implements ReadableSpan {
  readonly kind: SpanKind;
  name: string;
  readonly attributes: Attributes;
  status: SpanStatus = UNSET;
  readonly parentSpanContext?: SpanContext;
  readonly #context: SpanContext;
  readonly #origin: SpanOrigin;
  readonly #started = performance.now();
  #ended = -1;

  constructor(
    origin: SpanOrigin,
    kind: SpanKind,
    name: string,
    context: SpanContext,
    parent: SpanContext | undefined,
    attributes: Attributes,
  ) {
    this.#origin = origin;
    this.kind = kind;
    this.name = name;
    this.#context = context;
    if (parent !== undefined) this.parentSpanContext = parent;
    this.attributes = attributes;
  }

  /** Ends the span once; a second end changes nothing. */
  end(): boolean {
    if (this.#ended >= 0) return false;
    this.#ended = performance.now();
    return true;
  }

  fail(errorType: string): void {
    this.attributes["error.type"] = errorType;
    this.status = { code: SpanStatusCode.ERROR };
  }

  spanContext(): SpanContext {
    return this.#context;
  }

  get traceparent(): string {
    const { traceId, spanId, traceFlags } = this.#context;
    return `00-${traceId}-${spanId}-${(traceFlags & TraceFlags.SAMPLED) === 1 ? "01" : "00"}`;
  }

  get startTime(): HrTime {
    return hrTime(this.#started);
  }

  get endTime(): HrTime {
    return hrTime(this.#ended < 0 ? this.#started : this.#ended);
  }

  get duration(): HrTime {
    return hrTimeDuration(this.startTime, this.endTime);
  }

  get ended(): boolean {
    return this.#ended >= 0;
  }

  get resource(): Resource {
    return this.#origin.resource;
  }

  get instrumentationScope(): InstrumentationScope {
    return this.#origin.scope;
  }

  get links(): Link[] {
    return NONE;
  }

  get events(): TimedEvent[] {
    return NONE;
  }

  readonly droppedAttributesCount = 0;
  readonly droppedEventsCount = 0;
  readonly droppedLinksCount = 0;
}

/** A span context of this process's making: never remote. */
export function localContext(
  traceId: string,
  sampled: boolean,
  traceState: TraceState | undefined,
): SpanContext {
  return {
    traceId,
    spanId: randomHex(8),
    traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
    isRemote: false,
    ...(traceState === undefined ? {} : { traceState }),
  };
}
