/**
 * Reads the traces `tracefetch replay` runs again: one JSON document per line, as the file sink
 * writes them (a trace a line), or as a webhook receiver may store what it was sent (a
 * `tracefetch.trace-batch.v1` document, or the compact JWS itself, whose payload is one). A line
 * that is none of these is counted, never fatal. A JWS is read, not verified: the file is the
 * operator's own, and its signature was checked, if at all, when it arrived.
 */
import { readFile, stat } from "node:fs/promises";
import * as v from "valibot";
import { MAX_REPLAY_FILE_BYTES } from "../../protocol/trace-limits.ts";
import { type Trace, TraceBatchSchema, TraceSchema } from "../../protocol/trace-schema.ts";
import { errorCode } from "../saved-connection.ts";

export type TraceFile =
  | { ok: true; traces: Trace[]; unreadable: number }
  | { ok: false; code: "not_found" | "body_too_large" | "invalid_field"; message: string };

const COMPACT_JWS = /^[A-Za-z0-9_-]+\.([A-Za-z0-9_-]+)\.[A-Za-z0-9_-]+$/;

export async function readTraceFile(path: string): Promise<TraceFile> {
  let bytes: Uint8Array;
  try {
    // The size first: a file over the cap is refused without being read.
    if ((await stat(path)).size > MAX_REPLAY_FILE_BYTES) {
      return {
        ok: false,
        code: "body_too_large",
        message: `${path} is over ${MAX_REPLAY_FILE_BYTES} bytes; replay a rotated file at a time`,
      };
    }
    bytes = await readFile(path);
  } catch (error) {
    const code = errorCode(error);
    return code === "ENOENT"
      ? { ok: false, code: "not_found", message: `no trace file at ${JSON.stringify(path)}` }
      : { ok: false, code: "invalid_field", message: `cannot read ${path} (${code})` };
  }
  const traces: Trace[] = [];
  let unreadable = 0;
  for (const line of new TextDecoder().decode(bytes).split("\n")) {
    if (line.trim() === "") continue;
    const read = tracesOf(line.trim());
    if (read === null) unreadable++;
    else traces.push(...read);
  }
  return { ok: true, traces, unreadable };
}

/** The traces one line holds, or null when it holds none we can read. */
function tracesOf(line: string): Trace[] | null {
  const jws = COMPACT_JWS.exec(line);
  const text = jws === null ? line : decodeBase64url(jws[1] as string);
  if (text === null) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  const one = v.safeParse(TraceSchema, value);
  if (one.success) return [one.output];
  const batch = v.safeParse(TraceBatchSchema, value);
  // A fetch's trace has nothing to replay: only searches are read.
  return batch.success ? batch.output.traces.filter((t): t is Trace => !("kind" in t)) : null;
}

function decodeBase64url(text: string): string | null {
  try {
    const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
    return new TextDecoder("utf-8", { fatal: true }).decode(
      Uint8Array.from(binary, (c) => c.charCodeAt(0)),
    );
  } catch {
    return null;
  }
}
