/**
 * The JSONL trace file (TRACEFETCH_TRACE_FILE) on Node and Deno: one trace per line, appended a
 * batch at a time, the file created with mode 0600. Before a batch would take the file past its
 * size (TRACEFETCH_TRACE_FILE_MAX_BYTES) it is rotated: FILE becomes FILE.1, FILE.1 FILE.2, and so
 * on up to TRACE_FILES_KEPT, the oldest removed. One process writes a file.
 */
import { appendFile, open, rename, rm } from "node:fs/promises";
import { ConfigError } from "../protocol/config-error.ts";
import { TRACE_FILES_KEPT } from "../protocol/trace-limits.ts";
import { fileErrorCode } from "../config/start-problems.ts";
import { SinkError, type TraceSink } from "../protocol/trace-sink.ts";

/** Opens the file now, so a path that cannot be written stops the start, not the first search. */
export async function openTraceFile(path: string, maxBytes: number): Promise<TraceSink> {
  let size: number;
  try {
    const handle = await open(path, "a", 0o600);
    try {
      size = (await handle.stat()).size;
    } finally {
      await handle.close();
    }
  } catch (error) {
    const reason = reasonOf(error);
    // Deno refuses a write its permissions do not allow; the flag is the operator's fix.
    const hint = /^(NotCapable|PermissionDenied)$/.test(reason)
      ? "; Deno needs --allow-write for it"
      : "";
    throw new ConfigError(
      `TRACEFETCH_TRACE_FILE: cannot write ${JSON.stringify(path)} (${reason})${hint}`,
    );
  }
  return {
    kind: "file",
    async write(entries) {
      const text = entries.map((e) => `${e.json}\n`).join("");
      const bytes = new TextEncoder().encode(text).byteLength;
      try {
        if (size > 0 && size + bytes > maxBytes) {
          await rotate(path);
          size = 0;
        }
        await appendFile(path, text, { mode: 0o600 });
        size += bytes;
      } catch (error) {
        throw new SinkError(`cannot append to the trace file (${reasonOf(error)})`);
      }
    },
  };
}

async function rotate(path: string): Promise<void> {
  await rm(`${path}.${TRACE_FILES_KEPT}`, { force: true });
  for (let n = TRACE_FILES_KEPT - 1; n >= 1; n--) {
    await rename(`${path}.${n}`, `${path}.${n + 1}`).catch((error) => {
      if (fileErrorCode(error) !== "ENOENT") throw error;
    });
  }
  await rename(path, `${path}.1`);
}

/** Node's error code, or on Deno the error's name (PermissionDenied, NotCapable). */
function reasonOf(error: unknown): string {
  return fileErrorCode(error) ?? (error instanceof Error ? error.name : "error");
}
