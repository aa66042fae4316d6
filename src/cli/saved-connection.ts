/**
 * The connection `tracefetch connect` saves: the gateway URL and the name of the variable that
 * holds the token, never the token. One JSON file, mode 0600, under the XDG config folder.
 */
import { chmod, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import * as v from "valibot";
import { BINDING_PATTERN } from "../protocol/manifest-schema.ts";

/** Strict, like every wire format here: a file we do not understand is reported, not half-read. */
const SavedConnectionSchema = v.strictObject({
  version: v.literal(1),
  gateway: v.pipe(v.string(), v.url()),
  token_env: v.pipe(v.string(), v.regex(BINDING_PATTERN)),
});
export type SavedConnection = v.InferOutput<typeof SavedConnectionSchema>;

export type SavedState =
  | { kind: "none"; path: string }
  | { kind: "saved"; path: string; connection: SavedConnection }
  | { kind: "broken"; path: string; message: string };

/** $XDG_CONFIG_HOME/tracefetch/connection.json; the XDG spec says a relative value is ignored. */
export function connectionPath(env: Record<string, string | undefined>): string {
  const xdg = env.XDG_CONFIG_HOME;
  const base = xdg !== undefined && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), ".config");
  return join(base, "tracefetch", "connection.json");
}

export async function readSavedConnection(
  env: Record<string, string | undefined>,
): Promise<SavedState> {
  const path = connectionPath(env);
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { kind: "none", path };
    return { kind: "broken", path, message: `cannot be read (${errorCode(error)})` };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { kind: "broken", path, message: "is not valid JSON" };
  }
  const parsed = v.safeParse(SavedConnectionSchema, json);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const field = v.getDotPath(issue) || "file";
    return {
      kind: "broken",
      path,
      message: `is not a saved connection (${field}: ${issue.message})`,
    };
  }
  return { kind: "saved", path, connection: parsed.output };
}

/** Writes atomically (a temporary file renamed over the old one) with mode 0600 from the start. */
export async function writeSavedConnection(
  env: Record<string, string | undefined>,
  connection: Omit<SavedConnection, "version">,
): Promise<string> {
  const path = connectionPath(env);
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${crypto.randomUUID()}.tmp`;
  const body = `${JSON.stringify({ version: 1, ...connection }, null, 2)}\n`;
  await writeFile(temporary, body, { mode: 0o600, flag: "wx" });
  // The umask may have taken bits away; 0600 exactly is the contract.
  await chmod(temporary, 0o600);
  await rename(temporary, path);
  return path;
}

export function errorCode(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" ? code : error instanceof Error ? error.name : "error";
}
