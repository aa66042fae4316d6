/**
 * Node only: where a provider's answer body goes once it is read (node-exchange.ts): a
 * Collector that keeps decoded bytes within a cap and the search's byte budget, behind a Decoder
 * when the body is compressed.
 */
import { createBrotliDecompress, createGunzip, createInflate, type Zlib } from "node:zlib";
import type { Transform } from "node:stream";
import { MAX_PROVIDER_BODY_BYTES } from "../protocol/limits.ts";
import { UNDECODABLE_BODY } from "../io/provider-exchange.ts";
import type { ByteBudget } from "../io/byte-budget.ts";
import type { BoundedRead, EnoughRead } from "../io/bounded-reader.ts";

/** Compressed bytes held undecoded: gzip, deflate and br never grow a body by half. */
export const MAX_UNDECODED_BYTES = 2 * MAX_PROVIDER_BODY_BYTES;

/** Collects decoded bytes within the cap and the search's budget. */
export class Collector {
  readonly #chunks: Buffer[] = [];
  /** Decoded bytes so far. */
  read = 0;
  #settled = false;

  constructor(
    private readonly cap: number,
    private readonly budget: ByteBudget | null,
    private readonly done: (result: BoundedRead) => void,
    private readonly failed: (error: unknown) => void,
    private readonly enough?: EnoughRead,
  ) {}

  write(chunk: Buffer): void {
    if (this.#settled) return;
    this.read += chunk.length;
    if (this.read > this.cap) {
      this.settle({ ok: false, reason: "too_large", read: this.read });
    } else if (this.budget !== null && !this.budget.take(chunk.length)) {
      this.settle({ ok: false, reason: "budget_exceeded", read: this.read });
    } else {
      this.#chunks.push(chunk);
      if (this.enough?.(chunk)) this.end();
    }
  }

  end(): void {
    const chunks = this.#chunks;
    this.settle({
      ok: true,
      bytes: chunks.length === 1 ? chunks[0] as Buffer : Buffer.concat(chunks),
    });
  }

  fail(error: unknown): void {
    if (this.#settled) return;
    this.#settled = true;
    this.failed(error);
  }

  settle(result: BoundedRead): void {
    if (this.#settled) return;
    this.#settled = true;
    this.done(result);
  }
}

/**
 * Decompresses into a Collector. A decoder that fails by itself (not because the exchange did)
 * means the body is not in the encoding it claims: that error is marked UNDECODABLE_BODY. An
 * encoding this client does not decode passes the bytes through, as fetch does. Node's inflate
 * ends quietly at the end of its zlib stream and drops any bytes after it; a deflate body with
 * bytes past its stream's end is not the stream its content-encoding names, and fails as one that
 * does not decode, as it does on every runtime.
 */
export class Decoder {
  readonly #stream: (Transform & Zlib) | null;
  readonly #into: Collector;
  readonly #tooLarge: () => void;
  /** Compressed bytes handed to the decoder so far. */
  #written = 0;

  constructor(encoding: string, into: Collector, tooLarge: () => void) {
    this.#into = into;
    this.#tooLarge = tooLarge;
    const stream = decoderFor(encoding);
    this.#stream = stream;
    if (stream === null) return;
    stream.on("data", (chunk: Buffer) => into.write(chunk));
    const deflate = encoding.trim().toLowerCase() === "deflate";
    stream.once("end", () => {
      if (deflate && stream.bytesWritten < this.#written) {
        into.fail(undecodable(encoding, new Error("bytes follow the end of the zlib stream")));
      } else {
        into.end();
      }
    });
    stream.on("error", (error) => into.fail(undecodable(encoding, error)));
  }

  write(chunk: Buffer): void {
    if (this.#stream === null) return this.#into.write(chunk);
    if (this.#stream.writableLength > MAX_UNDECODED_BYTES) return this.#tooLarge();
    this.#written += chunk.length;
    this.#stream.write(chunk);
  }

  end(): void {
    if (this.#stream === null) this.#into.end();
    else this.#stream.end();
  }

  close(): void {
    this.#stream?.destroy();
  }
}

/** A decoder's own failure, marked UNDECODABLE_BODY for the classifier. */
export function undecodable(encoding: string | null, cause: unknown): Error {
  return Object.assign(
    new TypeError(`the body does not decode as content-encoding ${encoding}`, { cause }),
    { code: UNDECODABLE_BODY },
  );
}

export function decoderFor(encoding: string | null): (Transform & Zlib) | null {
  switch (encoding?.trim().toLowerCase()) {
    case "gzip":
    case "x-gzip":
      return createGunzip();
    case "deflate":
      return createInflate();
    case "br":
      return createBrotliDecompress();
    default:
      return null;
  }
}
