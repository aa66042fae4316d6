/**
 * The Workers Queue sink: each batch is one `sendBatch` of the Queue binding
 * TRACEFETCH_TRACE_QUEUE names, a message per trace (its JSON object, `contentType: "json"`).
 * Batches gather per isolate, as every search of the isolate shares one backlog.
 */
import { SinkError, type TraceSink } from "../../protocol/trace-sink.ts";

/** The part of a Workers Queue binding the sink uses. */
export type QueueBinding = {
  sendBatch(messages: Iterable<{ body: unknown; contentType?: "json" }>): Promise<unknown>;
};

export function isQueueBinding(value: unknown): value is QueueBinding {
  return typeof (value as { sendBatch?: unknown } | null)?.sendBatch === "function";
}

export function queueSink(binding: QueueBinding): TraceSink {
  return {
    kind: "queue",
    async write(entries) {
      try {
        await binding.sendBatch(entries.map((e) => ({ body: e.trace, contentType: "json" })));
      } catch (error) {
        throw new SinkError(`the Queue refused the batch (${(error as Error)?.name ?? "error"})`);
      }
    },
  };
}
