/**
 * A `Content-Encoding: deflate` body as its decoded bytes, whether or not the runtime's fetch
 * decoded it: Deno's fetch decodes gzip and br but hands a deflate body on as it came, while
 * Node's client and workerd decode it. A zlib stream (RFC 1950) opens with a header byte pair no
 * JSON text can open with, so a body that still opens with one was not decoded, and is inflated
 * here; anything else passes as it is. Cancelling the result cancels the source.
 */

/** Whether two bytes are a zlib header: method 8 (deflate), a window of at most 32 KiB, check bits. */
function isZlibHeader(bytes: Uint8Array): boolean {
  const [cmf, flg] = bytes as unknown as [number, number];
  return (cmf & 0x0f) === 8 && cmf >> 4 <= 7 && ((cmf << 8) | flg) % 31 === 0;
}

export function inflateIfDeflated(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const source = body.getReader();
  let out: ReadableStreamDefaultReader<Uint8Array> | null = null;
  /** The source again, from its first bytes on. */
  const replay = (head: Uint8Array) =>
    new ReadableStream<Uint8Array>({
      start: (controller) => controller.enqueue(head),
      pull: async (controller) => {
        const next = await source.read();
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      },
      cancel: (reason) => source.cancel(reason),
    });
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (out === null) {
        let head = new Uint8Array(0);
        while (head.byteLength < 2) {
          const next = await source.read();
          if (next.done) break;
          const joined = new Uint8Array(head.byteLength + next.value.byteLength);
          joined.set(head);
          joined.set(next.value, head.byteLength);
          head = joined;
        }
        const rest = replay(head);
        out = (head.byteLength >= 2 && isZlibHeader(head)
          ? rest.pipeThrough(
            new DecompressionStream("deflate") as TransformStream<Uint8Array, Uint8Array>,
          )
          : rest).getReader();
      }
      const next = await out.read();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    cancel: (reason) => (out ?? source).cancel(reason),
  });
}
