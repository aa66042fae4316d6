/**
 * A `Content-Encoding: deflate` body as its decoded bytes, whether or not the runtime's fetch
 * decoded it: Deno's fetch decodes gzip and br but hands a deflate body on as it came, while
 * Node's client and workerd decode it. A zlib stream (RFC 1950) opens with a header byte pair no
 * JSON text can open with, so a body that still opens with one was not decoded, and is inflated
 * here; anything else passes as it is. Cancelling the result cancels the source.
 *
 * A stream inflated here ends only if it decoded whole. Deno's DecompressionStream closes without
 * an error on a stream that stops early (inside the data or the trailer), handing on the bytes
 * decoded so far as if they were all, so the end is checked here: the body's last four bytes must
 * be the zlib trailer, the Adler-32 of everything decoded. A stream cut short ends on bytes that
 * are not that checksum, and so does one followed by bytes past its end. Every failure of the
 * decoder itself (not of the source) is passed through `undecodable`, which marks it as a body
 * that does not decode as its content-encoding says.
 */

/** zlib's trailer: the Adler-32 of the decoded bytes, big-endian (RFC 1950 section 2.2). */
const TRAILER_BYTES = 4;
/** Adler-32's modulus: the largest prime below 2^16 (RFC 1950 section 9). */
const ADLER_BASE = 65_521;
/** The most bytes Adler-32's sums take before they must be reduced to stay below 2^32 (zlib's NMAX). */
const ADLER_RUN = 5_552;

/** Whether two bytes are a zlib header: method 8 (deflate), a window of at most 32 KiB, check bits. */
function isZlibHeader(bytes: Uint8Array): boolean {
  const [cmf, flg] = bytes as unknown as [number, number];
  return (cmf & 0x0f) === 8 && cmf >> 4 <= 7 && ((cmf << 8) | flg) % 31 === 0;
}

/** Adler-32 (RFC 1950 section 8.2) carried on from `adler` over `bytes`; 1 starts it. */
function adler32(adler: number, bytes: Uint8Array): number {
  let a = adler & 0xffff;
  let b = adler >>> 16;
  for (let i = 0; i < bytes.byteLength;) {
    const end = Math.min(i + ADLER_RUN, bytes.byteLength);
    for (; i < end; i++) {
      a += bytes[i] as number;
      b += a;
    }
    a %= ADLER_BASE;
    b %= ADLER_BASE;
  }
  return (b * 0x10000 + a) >>> 0;
}

/** The last TRAILER_BYTES bytes of `tail` followed by `chunk`, copied: the chunk moves on. */
function lastBytes(tail: Uint8Array, chunk: Uint8Array): Uint8Array {
  if (chunk.byteLength >= TRAILER_BYTES) return chunk.slice(chunk.byteLength - TRAILER_BYTES);
  const joined = new Uint8Array(tail.byteLength + chunk.byteLength);
  joined.set(tail);
  joined.set(chunk, tail.byteLength);
  return joined.slice(Math.max(0, joined.byteLength - TRAILER_BYTES));
}

/** Whether `tail` is a zlib trailer carrying `adler`. */
function isTrailerOf(tail: Uint8Array, adler: number): boolean {
  return tail.byteLength === TRAILER_BYTES &&
    new DataView(tail.buffer, tail.byteOffset, TRAILER_BYTES).getUint32(0) === adler;
}

export function inflateIfDeflated(
  body: ReadableStream<Uint8Array>,
  undecodable: (cause: unknown) => Error,
): ReadableStream<Uint8Array> {
  const source = body.getReader();
  let out: ReadableStreamDefaultReader<Uint8Array> | null = null;
  let inflating = false;
  /** Set when the source itself failed: its error is the connection's, not the decoder's. */
  let sourceFailed = false;
  /** The last bytes read from the source: at its end, the zlib trailer. */
  let tail: Uint8Array = new Uint8Array(0);
  let adler = 1;
  const read = async () => {
    try {
      const next = await source.read();
      if (!next.done) tail = lastBytes(tail, next.value);
      return next;
    } catch (error) {
      sourceFailed = true;
      throw error;
    }
  };
  /** The source again, from its first bytes on. */
  const replay = (head: Uint8Array) =>
    new ReadableStream<Uint8Array>({
      start: (controller) => controller.enqueue(head),
      pull: async (controller) => {
        const next = await read();
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
          const next = await read();
          if (next.done) break;
          const joined = new Uint8Array(head.byteLength + next.value.byteLength);
          joined.set(head);
          joined.set(next.value, head.byteLength);
          head = joined;
        }
        const rest = replay(head);
        inflating = head.byteLength >= 2 && isZlibHeader(head);
        out = (inflating
          ? rest.pipeThrough(
            new DecompressionStream("deflate") as TransformStream<Uint8Array, Uint8Array>,
          )
          : rest).getReader();
      }
      let next: ReadableStreamReadResult<Uint8Array>;
      try {
        next = await out.read();
      } catch (error) {
        throw inflating && !sourceFailed ? undecodable(error) : error;
      }
      if (!next.done) {
        if (inflating) adler = adler32(adler, next.value);
        controller.enqueue(next.value);
      } else if (inflating && !isTrailerOf(tail, adler)) {
        throw undecodable(new Error("the zlib stream does not end with the checksum of its data"));
      } else {
        controller.close();
      }
    },
    cancel: (reason) => (out ?? source).cancel(reason),
  });
}
