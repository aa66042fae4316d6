/**
 * Reads a manifest file the way the gateway would accept it (at most MAX_MANIFEST_BYTES, strict
 * UTF-8 with a BOM dropped) and checks it with the manifest rules, each problem as a value.
 */
import { open } from "node:fs/promises";
import type { EnvelopeCode } from "../protocol/codes.ts";
import { MAX_MANIFEST_BYTES } from "../protocol/limits.ts";
import type { Manifest } from "../protocol/manifest-schema.ts";
import { parseCidr } from "../io/ip-rules.ts";
import { type ManifestIssue, parseManifestText } from "../protocol/validate-manifest.ts";
import { decodeUtf8 } from "../io/bounded-reader.ts";
import { ConfigError } from "../protocol/config-error.ts";
import type { ReadSettings } from "../config/settings.ts";
import { manifestFileMissing } from "../config/start-problems.ts";
import type { CliContext } from "./cli-context.ts";
import { errorCode } from "./saved-connection.ts";

export type ManifestCheck =
  | { ok: true; manifest: Manifest; text: string }
  | { ok: false; code: EnvelopeCode; issues: ManifestIssue[] };

/**
 * Reads no more than one byte past the cap, so a huge file costs no more than a small one. `from`
 * names where the path came from, as `npm start` names TRACEFETCH_MANIFEST.
 */
export async function readManifestFile(path: string, from = "the command line"): Promise<
  { ok: true; text: string } | { ok: false; code: EnvelopeCode; message: string }
> {
  let handle;
  try {
    handle = await open(path, "r");
  } catch (error) {
    const code = errorCode(error);
    return code === "ENOENT"
      ? { ok: false, code: "not_found", message: manifestFileMissing(path, from) }
      : { ok: false, code: "invalid_field", message: `cannot read ${path} (${code})` };
  }
  try {
    const buffer = new Uint8Array(MAX_MANIFEST_BYTES + 1);
    let filled = 0;
    while (filled < buffer.byteLength) {
      const { bytesRead } = await handle.read(buffer, filled, buffer.byteLength - filled, null);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    if (filled > MAX_MANIFEST_BYTES) {
      return {
        ok: false,
        code: "body_too_large",
        message: `${path} is over ${MAX_MANIFEST_BYTES} bytes, the most a manifest may be`,
      };
    }
    const text = decodeUtf8(buffer.subarray(0, filled));
    if (text === null) {
      return { ok: false, code: "invalid_utf8", message: `${path} is not valid UTF-8` };
    }
    return { ok: true, text };
  } catch (error) {
    return {
      ok: false,
      code: "invalid_field",
      message: `cannot read ${path} (${errorCode(error)})`,
    };
  } finally {
    await handle.close();
  }
}

/** The gateway's own check (parseManifestText); text that is not JSON at all is `invalid_json`. */
export function checkManifestText(text: string, allowLoopback: boolean): ManifestCheck {
  const parsed = parseManifestText(text, { allowLoopback, parseCidr });
  if (parsed.ok) return { ok: true, manifest: parsed.manifest, text };
  return {
    ok: false,
    code: isJson(text) ? "invalid_field" : "invalid_json",
    issues: parsed.issues,
  };
}

/** Reads and checks a file; a file that cannot be read is one issue on the field `manifest`. */
export async function checkManifestFile(
  path: string,
  allowLoopback: boolean,
  from?: string,
): Promise<ManifestCheck> {
  const read = await readManifestFile(path, from);
  if (!read.ok) {
    return { ok: false, code: read.code, issues: [{ field: "manifest", message: read.message }] };
  }
  return checkManifestText(read.text, allowLoopback);
}

/** The environment as a gateway reads it at start (ctx.settings), or the line that refuses it. */
export function envSettings(
  ctx: Pick<CliContext, "settings">,
): { ok: true; read: ReadSettings } | { ok: false; message: string } {
  try {
    return { ok: true, read: ctx.settings() };
  } catch (error) {
    if (error instanceof ConfigError) return { ok: false, message: error.message };
    throw error;
  }
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    return true;
  } catch {
    return false;
  }
}
