/**
 * Reads a body to the end or to a cap, counting decoded bytes (every runtime decompresses before we
 * see a chunk), and cancels the source at the cap so no byte past it is pulled.
 */
import type { ByteBudget } from "./byte-budget.ts";

export type BoundedRead =
  | { ok: true; bytes: Uint8Array }
  | { ok: false; reason: "too_large" | "budget_exceeded"; read: number };

/**
 * Told each chunk as it is kept; true ends the read there, with what was read so far, and gives the
 * rest of the body up: a stream that carries its answer and may stay open after it (an MCP server's
 * SSE stream, which the transport only says it SHOULD close).
 */
export type EnoughRead = (chunk: Uint8Array) => boolean;

/** Errors from the stream (a reset, an abort) propagate to the caller, which classifies them. */
export async function readBounded(
  body: ReadableStream<Uint8Array> | null,
  cap: number,
  budget: ByteBudget | null,
  enough?: EnoughRead,
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
      if (enough?.(value)) {
        await reader.cancel("read enough").catch(() => {});
        break;
      }
    }
  } finally {
    reader.releaseLock();
  }
  return { ok: true, bytes: concatBytes(chunks) };
}

/**
 * What readPrefix read: the body whole, or its first `cap` bytes with `truncated` (for a page, where
 * the beginning is worth keeping), or `aborted` when the signal fired first.
 */
export type PrefixRead =
  | { ok: true; bytes: Uint8Array; truncated: boolean }
  | { ok: false; reason: "aborted" };

/**
 * Reads at most `cap` bytes and cancels the source there, or when `signal` aborts (a body that
 * never ends stops at its deadline). Stream errors propagate to the caller, which classifies them.
 */
export async function readPrefix(
  body: ReadableStream<Uint8Array> | null,
  cap: number,
  signal: AbortSignal,
): Promise<PrefixRead> {
  if (signal.aborted) {
    await body?.cancel("aborted").catch(() => {});
    return { ok: false, reason: "aborted" };
  }
  if (body === null) return { ok: true, bytes: new Uint8Array(0), truncated: false };
  const reader = body.getReader();
  // Cancelling settles a pending read as done, so an abort ends the loop below.
  const stop = () => void reader.cancel("aborted").catch(() => {});
  signal.addEventListener("abort", stop, { once: true });
  const chunks: Uint8Array[] = [];
  let read = 0;
  let truncated = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || signal.aborted) break;
      if (read + value.byteLength > cap) {
        chunks.push(value.subarray(0, cap - read));
        read = cap;
        truncated = true;
        await reader.cancel("over the byte cap").catch(() => {});
        break;
      }
      read += value.byteLength;
      chunks.push(value);
    }
  } finally {
    signal.removeEventListener("abort", stop);
    reader.releaseLock();
  }
  if (signal.aborted) return { ok: false, reason: "aborted" };
  return { ok: true, bytes: concatBytes(chunks), truncated };
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
