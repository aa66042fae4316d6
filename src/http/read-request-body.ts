/**
 * Reads a caller's request body within a byte cap and a deadline, so a slow or endless sender
 * costs at most one bounded read for a bounded time and never holds a search slot while it sends.
 */
import { concatBytes } from "../io/bounded-reader.ts";

export type BodyRead =
  | { ok: true; bytes: Uint8Array }
  | { ok: false; code: "body_too_large" | "request_timeout" | "bad_request" };

export async function readRequestBody(
  request: Request,
  maxBytes: number,
  deadlineMs: number,
): Promise<BodyRead> {
  const declared = Number(request.headers.get("content-length") ?? Number.NaN);
  if (declared > maxBytes) {
    await request.body?.cancel().catch(() => {});
    return { ok: false, code: "body_too_large" };
  }
  if (request.body === null) return { ok: true, bytes: new Uint8Array(0) };
  const reader = request.body.getReader();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), deadlineMs);
  });
  const chunks: Uint8Array[] = [];
  let read = 0;
  try {
    for (;;) {
      const next = await Promise.race([reader.read(), late]);
      if (next === "late") {
        await reader.cancel("the request body is late").catch(() => {});
        return { ok: false, code: "request_timeout" };
      }
      if (next.done) return { ok: true, bytes: concatBytes(chunks) };
      read += next.value.byteLength;
      if (read > maxBytes) {
        await reader.cancel("the request body is over its cap").catch(() => {});
        return { ok: false, code: "body_too_large" };
      }
      chunks.push(next.value);
    }
  } catch {
    // The sender broke the body off (a reset, a malformed chunk): nothing usable arrived.
    return { ok: false, code: "bad_request" };
  } finally {
    clearTimeout(timer);
  }
}
