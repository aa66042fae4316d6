/**
 * Streaming search (docs/envelope.md, "Streaming"): NDJSON or SSE events as the search happens:
 * `plan`, one `provider` per attempt in completion order, `merged`, then `done` (the
 * authoritative header). The request was validated and planned before the stream starts, so
 * refusals are ordinary 4xx.
 */
import type { Context } from "hono";
import { stream } from "hono/streaming";
import { doneEnvelope } from "../envelope/search-envelope.ts";
import type { AdmittedSearch, RunOptions } from "../gateway/search-run.ts";
import { NO_SNIFF } from "./respond.ts";

export type StreamFormat = "ndjson" | "sse";

const CONTENT_TYPES: Record<StreamFormat, string> = {
  ndjson: "application/x-ndjson; charset=utf-8",
  sse: "text/event-stream; charset=utf-8",
};

/** The format a caller asked for: the GET `stream` parameter first, then the Accept header. */
export function streamFormat(
  accept: string | undefined,
  param: string | null,
): StreamFormat | null {
  if (param === "ndjson" || param === "sse") return param;
  if (accept === undefined) return null;
  const types = accept.split(",").map((t) => t.split(";")[0]?.trim().toLowerCase());
  if (types.includes("application/x-ndjson")) return "ndjson";
  if (types.includes("text/event-stream")) return "sse";
  return null;
}

function frame(format: StreamFormat, event: Record<string, unknown> & { event: string }): string {
  const json = JSON.stringify(event);
  return format === "ndjson" ? `${json}\n` : `event: ${event.event}\ndata: ${json}\n\n`;
}

/** Writes one event; events are written in the order they are sent. */
export type SendEvent = (event: Record<string, unknown> & { event: string }) => void;

/**
 * A stream of events in `format` with the headers every stream of the gateway has, a heartbeat
 * every `heartbeatMs`, and a signal that aborts when the caller goes away: `run` sends the events,
 * and the stream ends once it has settled and every event was written.
 */
export function eventStream(
  c: Context,
  format: StreamFormat,
  requestId: string,
  heartbeatMs: number,
  run: (send: SendEvent, signal: AbortSignal, written: () => Promise<unknown>) => Promise<void>,
): Response {
  c.header("content-type", CONTENT_TYPES[format]);
  c.header("x-content-type-options", NO_SNIFF["x-content-type-options"]);
  c.header("cache-control", "no-store");
  c.header("x-request-id", requestId);
  // Tells nginx-style proxies not to buffer: events must reach the caller as they happen.
  c.header("x-accel-buffering", "no");
  return stream(c, async (out) => {
    const left = new AbortController();
    out.onAbort(() => left.abort());
    const signal = AbortSignal.any([c.req.raw.signal, left.signal]);
    let writes: Promise<unknown> = Promise.resolve();
    const send: SendEvent = (event) => {
      writes = writes.then(() => out.write(frame(format, event)));
    };
    const heartbeat = setInterval(() => {
      writes = writes.then(() =>
        out.write(
          format === "ndjson"
            ? frame(format, { event: "heartbeat", request_id: requestId })
            : ": heartbeat\n\n",
        )
      );
    }, heartbeatMs);
    try {
      await run(send, signal, () => writes);
      await writes;
    } finally {
      clearInterval(heartbeat);
    }
  });
}

/** Streams an admitted search; its in-flight slot is given back once the last event is written. */
export function streamSearch(
  c: Context,
  format: StreamFormat,
  search: AdmittedSearch,
  requestId: string,
  heartbeatMs: number,
  later: RunOptions["later"],
): Response {
  return eventStream(c, format, requestId, heartbeatMs, async (send, signal, written) => {
    await search.run({
      signal,
      later,
      onPlan: (decision) => send({ event: "plan", request_id: requestId, decision }),
      onAttempt: (index, attempt) =>
        send({ event: "provider", request_id: requestId, index, attempt }),
    }, async ({ completed, mining }) => {
      if (!signal.aborted) {
        send({ event: "merged", request_id: requestId, merged: completed.result.merged ?? [] });
        send({ event: "done", ...doneEnvelope(completed, requestId, mining) });
      }
      await written();
    });
  });
}
