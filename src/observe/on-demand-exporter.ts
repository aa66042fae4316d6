/**
 * A span exporter imported in the background: the OTLP exporters (one package per encoding) are
 * loaded as the tracer is built, without holding the gateway's start, so the first batch finds the
 * exporter ready instead of loading it in the middle of serving; a batch handed over before that
 * waits for it.
 */
import { type ExportResult, ExportResultCode } from "@opentelemetry/core";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";

export class OnDemandExporter implements SpanExporter {
  #loading: Promise<SpanExporter> | null = null;

  constructor(readonly load: () => Promise<SpanExporter>) {
    // A failed import fails each export (counted), never the start.
    this.#loaded().catch(() => {});
  }

  #loaded(): Promise<SpanExporter> {
    this.#loading ??= this.load();
    return this.#loading;
  }

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.#loaded().then(
      (exporter) => exporter.export(spans, done),
      (error: unknown) => done({ code: ExportResultCode.FAILED, error: error as Error }),
    );
  }

  async shutdown(): Promise<void> {
    if (this.#loading !== null) await (await this.#loading).shutdown();
  }

  async forceFlush(): Promise<void> {
    if (this.#loading !== null) await (await this.#loading).forceFlush?.();
  }
}
