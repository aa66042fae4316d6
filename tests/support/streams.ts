/** Reads NDJSON and SSE streams from a real HTTP response, event by event, with arrival times. */

export type Arrived = {
  at: number;
  event: Record<string, unknown> & { event: string };
  raw: string;
};

/** Splits a streamed body into frames as they arrive (NDJSON lines, or SSE blocks). */
export async function* frames(
  body: ReadableStream<Uint8Array>,
  format: "ndjson" | "sse",
): AsyncGenerator<{ at: number; raw: string }> {
  const decoder = new TextDecoder();
  const separator = format === "ndjson" ? "\n" : "\n\n";
  let buffer = "";
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    for (let i = buffer.indexOf(separator); i !== -1; i = buffer.indexOf(separator)) {
      const raw = buffer.slice(0, i);
      buffer = buffer.slice(i + separator.length);
      if (raw !== "") yield { at: performance.now(), raw };
    }
  }
}

/** Collects every event; SSE comments (heartbeats) are returned as event "comment". */
export async function collect(
  body: ReadableStream<Uint8Array>,
  format: "ndjson" | "sse",
): Promise<Arrived[]> {
  const out: Arrived[] = [];
  for await (const { at, raw } of frames(body, format)) {
    out.push({ at, raw, event: parse(raw, format) });
  }
  return out;
}

export function parse(raw: string, format: "ndjson" | "sse"): Arrived["event"] {
  if (format === "ndjson") return JSON.parse(raw);
  if (raw.startsWith(":")) return { event: "comment", text: raw.slice(1).trim() };
  const lines = raw.split("\n");
  const name = lines.find((l) => l.startsWith("event: "))?.slice(7);
  const data = lines.filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
  const event = JSON.parse(data);
  if (event.event !== name) {
    throw new Error(`SSE event name ${name} differs from data.event ${event.event}`);
  }
  return event;
}
