/**
 * Reads a caller's request body within a byte cap and a deadline, so a slow or endless sender
 * costs at most one bounded read for a bounded time and never holds a search slot while it sends.
 *
 * Invariants:
 * - Every byte kept is charged to a bound shared by all bodies being read, as it arrives; a body
 *   that would pass it is refused, never truncated.
 * - A body refused at a bound is read on and dropped, never buffered, to its end when it ends
 *   within MAX_DRAINED_BODY_BYTES in all, its deadline and BODY_DRAIN_MS. A socket closed with
 *   bytes unread is reset by the kernel, and the refusal with it, before a sender that reads only
 *   once it has sent ever sees it.
 */
import { concatBytes } from "../io/bounded-reader.ts";
import { BODY_DRAIN_MS, MAX_DRAINED_BODY_BYTES } from "../protocol/admission-limits.ts";

export type BodyRefusal = "body_too_large" | "request_timeout" | "bad_request" | "overloaded";

export type BodyRead =
  | { ok: true; bytes: Uint8Array }
  /** `ended`: the body was read to its end, so its connection can carry another request. */
  | { ok: false; code: BodyRefusal; ended: boolean };

export type BodyBounds = {
  maxBytes: number;
  deadlineMs: number;
  /** Charges kept bytes to the bound all bodies being read share; false refuses this body. */
  charge: (bytes: number) => boolean;
};

type Reader = ReadableStreamDefaultReader<Uint8Array>;

export async function readRequestBody(request: Request, bounds: BodyBounds): Promise<BodyRead> {
  if (request.body === null) return { ok: true, bytes: new Uint8Array(0) };
  const declared = Number(request.headers.get("content-length") ?? Number.NaN);
  const reader = request.body.getReader();
  const deadline = lateAfter(bounds.deadlineMs);
  const chunks: Uint8Array[] = [];
  let read = 0;
  try {
    if (declared > bounds.maxBytes) {
      return await refuse("body_too_large", reader, { declared, read }, deadline);
    }
    for (;;) {
      const next = await nextOrLate(reader, deadline);
      if (next === "late") {
        await reader.cancel("the request body is late").catch(() => {});
        return { ok: false, code: "request_timeout", ended: false };
      }
      if (next.done) return { ok: true, bytes: concatBytes(chunks) };
      read += next.value.byteLength;
      const tooLarge = read > bounds.maxBytes;
      if (tooLarge || !bounds.charge(next.value.byteLength)) {
        // What was kept is let go now, not held while the rest is dropped.
        chunks.length = 0;
        const code = tooLarge ? "body_too_large" : "overloaded";
        return await refuse(code, reader, { declared, read }, deadline);
      }
      chunks.push(next.value);
    }
  } catch {
    // The sender broke the body off (a reset, a malformed chunk): nothing usable arrived.
    return { ok: false, code: "bad_request", ended: false };
  } finally {
    deadline.clear();
  }
}

/**
 * The refusal of a body at a bound, once the rest of it is read and dropped: `declared` is its
 * Content-Length (NaN without one), `read` what was read of it so far.
 */
async function refuse(
  code: BodyRefusal,
  reader: Reader,
  { declared, read }: { declared: number; read: number },
  deadline: Late,
): Promise<BodyRead> {
  const drain = lateAfter(BODY_DRAIN_MS);
  let total = read;
  try {
    while (!(declared > MAX_DRAINED_BODY_BYTES) && total <= MAX_DRAINED_BODY_BYTES) {
      const next = await nextOrLate(reader, deadline, drain);
      if (next === "late") break;
      if (next.done) return { ok: false, code, ended: true };
      total += next.value.byteLength;
    }
  } catch {
    // Broken off while being dropped: the refusal stands, and the connection is gone.
    return { ok: false, code, ended: false };
  } finally {
    drain.clear();
  }
  await reader.cancel("the request body was refused").catch(() => {});
  return { ok: false, code, ended: false };
}

type Late = { late: Promise<"late">; clear: () => void };

/** A promise of "late" in `ms`, and what stops it. */
function lateAfter(ms: number): Late {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), ms);
  });
  return { late, clear: () => clearTimeout(timer) };
}

/**
 * The next chunk, or "late" when a deadline comes first. A read left behind by a deadline is
 * settled by the cancel that follows, and its failure, if any, is handled here.
 */
function nextOrLate(reader: Reader, ...deadlines: Late[]) {
  const next = reader.read();
  next.catch(() => {});
  return Promise.race([next, ...deadlines.map((d) => d.late)]);
}
