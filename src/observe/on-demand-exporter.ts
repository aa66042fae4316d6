/**
 * A span exporter loaded with the first batch it is handed: the OTLP exporters are packages of
 * their own, and a root that may never export (no endpoint reached yet, or a sampler that keeps
 * nothing) need not load one at start.
 */
import { type ExportResult, ExportResultCode } from "@opentelemetry/core";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";

export class OnDemandExporter implements SpanExporter {
  #loading: Promise<SpanExporter> | null = null;

  constructor(readonly load: () => Promise<SpanExporter>) {}

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
