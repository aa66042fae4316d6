/**
 * Reads a streamed search (docs/envelope.md, "Streaming"; NDJSON) event by event under the same
 * byte cap as a plain answer, and rebuilds the envelope from `merged`, the `provider` events and
 * `done`.
 */
import * as v from "valibot";
import type {
  AttemptRecord,
  Decision,
  Envelope,
  MergedEntry,
} from "../protocol/envelope-schema.ts";
import { EnvelopeSchema } from "../protocol/envelope-schema.ts";
import { MAX_GATEWAY_ANSWER_BYTES } from "../protocol/limits.ts";
import { concatBytes, decodeUtf8 } from "../io/bounded-reader.ts";

export type SearchEvent =
  | { event: "plan"; decision: Decision }
  | { event: "provider"; index: number; attempt: AttemptRecord }
  | { event: "heartbeat" };

export type StreamRead =
  | { ok: true; envelope: Envelope }
  | { ok: false; reason: "too_large" | "not_an_event" | "no_done" | "not_an_envelope" };

const NEWLINE = 0x0a;

/** Errors of the body itself (a reset, the timeout firing) propagate to the caller. */
export async function readSearchStream(
  body: ReadableStream<Uint8Array> | null,
  onEvent: (event: SearchEvent) => void,
): Promise<StreamRead> {
  if (body === null) return { ok: false, reason: "no_done" };
  const reader = body.getReader();
  // The bytes of the line being read, kept as chunks so a long line is joined once, not per chunk.
  let partial: Uint8Array[] = [];
  let read = 0;
  const attempts: Array<[number, AttemptRecord]> = [];
  const seen: { merged: MergedEntry[] | null; done: Record<string, unknown> | null } = {
    merged: null,
    done: null,
  };
  const take = (line: string): boolean => {
    if (line.trim() === "") return true;
    const event = parseEvent(line);
    if (event === null) return false;
    switch (event.event) {
      case "plan":
        onEvent({ event: "plan", decision: event.decision as Decision });
        break;
      case "provider": {
        const index = Number(event.index);
        const attempt = event.attempt as AttemptRecord;
        attempts.push([index, attempt]);
        onEvent({ event: "provider", index, attempt });
        break;
      }
      case "merged":
        seen.merged = event.merged as MergedEntry[];
        break;
      case "done":
        seen.done = event;
        break;
      case "heartbeat":
        onEvent({ event: "heartbeat" });
        break;
      default:
        // Events a newer gateway adds are not ours to judge; `done` is the authoritative header.
        break;
    }
    return true;
  };
  try {
    for (;;) {
      const { done: ended, value } = await reader.read();
      if (ended) break;
      read += value.byteLength;
      if (read > MAX_GATEWAY_ANSWER_BYTES) {
        await reader.cancel("over the byte cap").catch(() => {});
        return { ok: false, reason: "too_large" };
      }
      let start = 0;
      for (let at = value.indexOf(NEWLINE); at !== -1; at = value.indexOf(NEWLINE, start)) {
        const line = decodeUtf8(concatBytes([...partial, value.subarray(start, at)]));
        partial = [];
        start = at + 1;
        if (line === null || !take(line)) {
          await reader.cancel("not an event stream").catch(() => {});
          return { ok: false, reason: "not_an_event" };
        }
      }
      if (start < value.byteLength) partial.push(value.subarray(start));
    }
    // A last line without its newline still counts.
    const last = partial.length > 0 ? decodeUtf8(concatBytes(partial)) : "";
    if (last === null || !take(last)) return { ok: false, reason: "not_an_event" };
  } finally {
    reader.releaseLock();
  }
  if (seen.done === null) return { ok: false, reason: "no_done" };
  const { event: _event, ...header } = seen.done;
  const envelope = header as Record<string, unknown> & { result?: Record<string, unknown> };
  if (envelope.result !== undefined && typeof envelope.result === "object") {
    envelope.result = {
      ...envelope.result,
      merged: seen.merged ?? [],
      // Every attempt, whatever the view: the stream sent them, and people want each outcome.
      candidates: attempts.sort((a, b) => a[0] - b[0]).map(([, attempt]) => attempt),
    };
  }
  const parsed = v.safeParse(EnvelopeSchema, envelope);
  return parsed.success
    ? { ok: true, envelope: parsed.output }
    : { ok: false, reason: "not_an_envelope" };
}

function parseEvent(line: string): (Record<string, unknown> & { event: string }) | null {
  try {
    const value: unknown = JSON.parse(line);
    if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
    const event = (value as { event?: unknown }).event;
    return typeof event === "string" ? value as Record<string, unknown> & { event: string } : null;
  } catch {
    return null;
  }
}
