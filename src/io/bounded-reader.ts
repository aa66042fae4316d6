/**
 * Reads a body to the end or to a cap, counting decoded bytes (every runtime decompresses before we
 * see a chunk), and cancels the source at the cap so no byte past it is pulled.
 */
import type { ByteBudget } from "./byte-budget.ts";

export type BoundedRead =
  | { ok: true; bytes: Uint8Array }
  | { ok: false; reason: "too_large" | "budget_exceeded"; read: number };

/** Errors from the stream (a reset, an abort) propagate to the caller, which classifies them. */
export async function readBounded(
  body: ReadableStream<Uint8Array> | null,
  cap: number,
  budget: ByteBudget | null,
): Promise<BoundedRead> {
  if (body === null) return { ok: true, bytes: new Uint8Array(0) };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let read = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      read += value.byteLength;
      if (read > cap) {
        await reader.cancel("over the byte cap").catch(() => {});
        return { ok: false, reason: "too_large", read };
      }
      if (budget !== null && !budget.take(value.byteLength)) {
        await reader.cancel("over the search's byte budget").catch(() => {});
        return { ok: false, reason: "budget_exceeded", read };
      }
      chunks.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  return { ok: true, bytes: concatBytes(chunks) };
}

/** The chunks as one array; a single chunk is returned as it is, without a copy. */
export function concatBytes(chunks: readonly Uint8Array[]): Uint8Array {
  if (chunks.length === 1) return chunks[0] as Uint8Array;
  const bytes = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/**
 * One decoder for every body: a call without `stream` starts afresh (Encoding standard, decode()
 * step 1), so nothing carries over from one body, or one failure, to the next.
 */
const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

/** Strict UTF-8 (a BOM is tolerated and dropped): one behaviour on every runtime. */
export function decodeUtf8(bytes: Uint8Array): string | null {
  try {
    return STRICT_UTF8.decode(bytes);
  } catch {
    return null;
  }
}
