/**
 * A span exporter over `fetch`, for Workers (docs/decisions.md, "Metrics and traces"): the official
 * OTLP/HTTP exporters send through Node's http module or a browser's XHR, neither of which a Worker
 * has. It encodes each batch with the official OTLP serializers (protobuf or JSON, as
 * OTEL_EXPORTER_OTLP_PROTOCOL says) and POSTs it to the traces endpoint under a deadline.
 */
import { type ExportResult, ExportResultCode } from "@opentelemetry/core";
import { JsonTraceSerializer, ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";
import type { OtlpProtocol } from "../config/telemetry-settings.ts";
import { EXPORT_TIMEOUT_MS } from "./otel-tracing.ts";

const ENCODINGS = {
  "http/protobuf": { serializer: ProtobufTraceSerializer, type: "application/x-protobuf" },
  "http/json": { serializer: JsonTraceSerializer, type: "application/json" },
} as const satisfies Record<OtlpProtocol, unknown>;

export class FetchSpanExporter implements SpanExporter {
  constructor(
    readonly endpoint: string,
    readonly headers: Record<string, string>,
    readonly protocol: OtlpProtocol,
    readonly send: typeof fetch = (input, init) => fetch(input, init),
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    const { serializer, type } = ENCODINGS[this.protocol];
    const body = serializer.serializeRequest(spans);
    if (body === undefined) {
      done({ code: ExportResultCode.FAILED, error: new Error("the batch could not be encoded") });
      return;
    }
    this.send(this.endpoint, {
      method: "POST",
      headers: { ...this.headers, "content-type": type },
      // The serializers write into an ArrayBuffer of their own, never a shared one.
      body: body as Uint8Array<ArrayBuffer>,
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
