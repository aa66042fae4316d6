/**
 * Where traces go: one sink per gateway, chosen by configuration. The gateway builds the webhook
 * sink itself; a runtime hands it the file sink (Node, Deno) or the Queue sink (Workers).
 */
import type { FetchTrace, Trace } from "./trace-schema.ts";

export type SinkKind = "file" | "webhook" | "queue";

/**
 * A trace with its JSON, serialised once, and that JSON's size in UTF-8 bytes: batches are sized by
 * it and sinks write the JSON as it is.
 */
export type TraceEntry = { trace: Trace | FetchTrace; json: string; bytes: number };

export type TraceSink = {
  readonly kind: SinkKind;
  /** Writes one batch, in order; rejects when the sink did not take all of it. */
  write(entries: readonly TraceEntry[]): Promise<void>;
};

/**
 * A sink's failure, worded for `health` ("webhook answered 503"): the only error whose message is
 * shown. It names no URL, path or secret; any other error shows only its code or name.
 */
export class SinkError extends Error {
  override name = "SinkError";
}
