/**
 * The messages of an MCP server's SSE answer (WHATWG HTML, "Server-sent events": an event's `data`
 * lines, dispatched at a blank line), whole or as the stream arrives. MCP 2025-06-18 ("Streamable
 * HTTP") says a server SHOULD close the stream once its response is sent, not that it must: the
 * watch lets the reader stop at the response instead of waiting for an end that may not come.
 */
import { isRecord, parseJson } from "../protocol/json-value.ts";

const EVENT_STREAM = /^text\/event-stream\s*(?:;|$)/i;

/** Whether a Content-Type names an SSE stream (`text/event-stream`, maybe with parameters). */
export function isEventStream(contentType: string | null): boolean {
  return EVENT_STREAM.test(contentType ?? "");
}

/** The JSON messages of an SSE stream's `data` fields, one per event. */
export function sseMessages(text: string): unknown[] {
  const messages: unknown[] = [];
  let data: string[] = [];
  const dispatch = () => {
    if (data.length === 0) return;
    const json = parseJson(data.join("\n"));
    if (json !== undefined) messages.push(json);
    data = [];
  };
  for (const line of text.split(/\r\n|\r|\n/)) {
    if (line === "") dispatch();
    else if (line.startsWith("data:")) data.push(line.slice(line.startsWith("data: ") ? 6 : 5));
  }
  dispatch();
  return messages;
}

/** A JSON-RPC response (a result or an error) to request `id`. */
export function isResponseTo(message: unknown, id: number | undefined): boolean {
  return isRecord(message) && message.id === id && ("result" in message || "error" in message);
}

/**
 * Two line ends in a row: where an event ends (CR, LF or CRLF each end a line; a CR followed by LF
 * is one CRLF, never two ends).
 */
const EVENT_END = /(?:\r\n|\r(?!\n)|\n)(?:\r\n|\r|\n)/g;
/** The most characters an event's end takes: CRLF twice. */
const LONGEST_EVENT_END = 4;

/**
 * Told an SSE stream's chunks in order: `seen` turns true once a complete event carries the
 * response to `id`, and `messages` and `text` then hold the events read so far. Bytes that
 * are not UTF-8 also end the watch (`invalid`), as they fail the whole read.
 */
export class SseResponseWatch {
  readonly #id: number | undefined;
  readonly #decoder = new TextDecoder("utf-8", { fatal: true });
  /** Text after the last complete event: the start of the next one. */
  #pending = "";
  /** The complete events read so far, as text. */
  text = "";
  readonly messages: unknown[] = [];
  seen = false;
  invalid = false;

  constructor(id: number | undefined) {
    this.#id = id;
  }

  /** Takes the next chunk; true once the response has arrived (or the bytes are not UTF-8). */
  take(chunk: Uint8Array): boolean {
    if (this.seen || this.invalid) return true;
    // What was pending holds no event's end, but its last characters may start one: the scan goes
    // back that far only, so a long event arriving in many chunks is scanned once, not again each.
    const from = Math.max(0, this.#pending.length - LONGEST_EVENT_END + 1);
    try {
      this.#pending += this.#decoder.decode(chunk, { stream: true });
    } catch {
      this.invalid = true;
      return true;
    }
    let end = -1;
    EVENT_END.lastIndex = from;
    for (let match = EVENT_END.exec(this.#pending); match !== null;) {
      end = match.index + match[0].length;
      match = EVENT_END.exec(this.#pending);
    }
    if (end === -1) return false;
    const events = this.#pending.slice(0, end);
    const complete = sseMessages(events);
    this.text += events;
    this.#pending = this.#pending.slice(end);
    this.messages.push(...complete);
    this.seen = complete.some((m) => isResponseTo(m, this.#id));
    return this.seen;
  }
}
