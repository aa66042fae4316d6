/**
 * An MCP server's SSE answer read as it arrives: the watch says when the response to the request
 * has come, however the stream is cut into chunks (line ends and characters split between them),
 * and the bounded reader stops there and gives the rest of the stream up.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { SseResponseWatch } from "../src/transport/mcp-sse.ts";
import { readBounded } from "../src/io/bounded-reader.ts";

const encoder = new TextEncoder();
const note = { jsonrpc: "2.0", method: "notifications/message", params: { data: "übung" } };
const other = { jsonrpc: "2.0", id: 6, result: { wrong: true } };
const response = { jsonrpc: "2.0", id: 7, result: { title: "Café 東京 🙂" } };
const event = (message: unknown, end: string) =>
  `event: message${end}data: ${JSON.stringify(message)}${end}${end}`;

/** The bytes cut at the given offsets (sorted, deduplicated, inside the text). */
function cutAt(bytes: Uint8Array, offsets: number[]): Uint8Array[] {
  const points = [...new Set(offsets.map((o) => o % bytes.length))].sort((a, b) => a - b);
  const chunks: Uint8Array[] = [];
  let from = 0;
  for (const at of [...points, bytes.length]) {
    if (at > from) chunks.push(bytes.subarray(from, at));
    from = Math.max(from, at);
  }
  return chunks;
}

/** Feeds chunks until the watch has its response; the index of the chunk that completed it. */
function feed(watch: SseResponseWatch, chunks: Uint8Array[]): number {
  for (const [i, chunk] of chunks.entries()) if (watch.take(chunk)) return i;
  return -1;
}

describe("the SSE response watch", () => {
  it("sees the response once its event is complete, however the stream is cut", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("\n", "\r\n", "\r"),
        fc.array(fc.nat(), { maxLength: 40 }),
        (end, offsets) => {
          const head = event(note, end) + event(other, end);
          const text = head + event(response, end) + event(note, end);
          const bytes = encoder.encode(text);
          const chunks = cutAt(bytes, offsets);
          const watch = new SseResponseWatch(7);
          const at = feed(watch, chunks);
          assert.ok(at >= 0 && watch.seen && !watch.invalid);
          // Not before the response's event has ended: the bytes up to that chunk hold it whole.
          const upTo = chunks.slice(0, at + 1).reduce((n, c) => n + c.byteLength, 0);
          const responseEnds = encoder.encode(head + event(response, end)).byteLength;
          // A CRLF's LF may arrive in the next chunk: a CR already ends the line.
          assert.ok(upTo >= responseEnds - (end === "\r\n" ? 1 : 0), `${upTo} < ${responseEnds}`);
          assert.deepEqual(watch.messages.slice(0, 3), [note, other, response]);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("never sees a response to another request, nor one whose event has not ended", () => {
    const watch = new SseResponseWatch(8);
    assert.equal(feed(watch, [encoder.encode(event(note, "\n") + event(response, "\n"))]), -1);
    const open = new SseResponseWatch(7);
    assert.equal(open.take(encoder.encode(`data: ${JSON.stringify(response)}\n`)), false);
    assert.equal(open.take(encoder.encode("\n")), true);
    // The complete events, as text: what a transcript shows of a stream read up to its response.
    assert.equal(open.text, `data: ${JSON.stringify(response)}\n\n`);
  });

  it("ends at bytes that are not UTF-8, marked invalid", () => {
    const watch = new SseResponseWatch(7);
    assert.equal(watch.take(Uint8Array.of(0x64, 0x61, 0xff)), true);
    assert.equal(watch.invalid, true);
    assert.equal(watch.seen, false);
  });
});

describe("a bounded read told when it has enough", () => {
  it("stops at that chunk, answers what was read, and cancels the rest of the stream", async () => {
    let cancelled: unknown = null;
    let pulls = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulls++;
        controller.enqueue(encoder.encode(`chunk ${pulls};`));
      },
      cancel(reason) {
        cancelled = reason;
      },
    });
    const seen: string[] = [];
    const read = await readBounded(body, 1_000, null, (chunk) => {
      seen.push(new TextDecoder().decode(chunk));
      return seen.length === 3;
    });
    assert.deepEqual(read, { ok: true, bytes: encoder.encode("chunk 1;chunk 2;chunk 3;") });
    assert.equal(cancelled, "read enough");
    // The endless stream was pulled no further than the read needed (one chunk queued ahead).
    assert.ok(pulls <= 4, String(pulls));
  });
});
