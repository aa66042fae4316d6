/**
 * A TraceFetch 1.0 manifest of command providers (the `command` edition of
 * `tracefetch.providers.v1`), read as 1.0 read it: a fixed argv per provider, a path-like
 * executable (one containing "/") resolved against the manifest's folder, a bare one looked up on
 * PATH when it runs.
 *
 * Only `name`, `scope`, `command` and `timeout_seconds` matter to the bridge; the other 1.0 fields
 * (sensitivity, source_class, cost_micros, ...) belong to the gateway's manifest entry and are
 * left alone here.
 */
import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import * as v from "valibot";
import { ConfigError } from "../../src/kit/mod.ts";
import {
  DEFAULT_PROVIDER_TIMEOUT_SECONDS,
  MAX_MANIFEST_BYTES,
  MAX_PROVIDER_TIMEOUT_SECONDS,
} from "../../src/protocol/limits.ts";
import { MANIFEST_VERSION, NAME_PATTERN } from "../../src/protocol/manifest-schema.ts";

export type CommandProvider = {
  name: string;
  scope: string;
  /** The argv as the manifest wrote it: what messages show (a resolved path names this machine). */
  command: readonly string[];
  /** What is spawned: the resolved executable and the arguments, untouched. */
  executable: string;
  args: readonly string[];
  timeoutMs: number;
};

export type CommandManifest = {
  providers: CommandProvider[];
  /** Entries the bridge does not serve, with the reason. */
  skipped: Array<{ name: string; reason: string }>;
};

// Loose: a 1.0 manifest carries fields for the gateway that the bridge neither needs nor judges.
const EntrySchema = v.looseObject({
  name: v.pipe(v.string(), v.regex(NAME_PATTERN)),
  scope: v.pipe(v.string(), v.regex(NAME_PATTERN)),
  command: v.optional(v.pipe(v.array(v.pipe(v.string(), v.minLength(1))), v.minLength(1))),
  timeout_seconds: v.optional(
    v.pipe(v.number(), v.minValue(0), v.maxValue(MAX_PROVIDER_TIMEOUT_SECONDS)),
    DEFAULT_PROVIDER_TIMEOUT_SECONDS,
  ),
});

const ManifestSchema = v.looseObject({
  schema_version: v.literal(MANIFEST_VERSION),
  providers: v.array(EntrySchema),
});

/** Reads and checks a 1.0 manifest file; relative executables resolve against its folder. */
export async function readCommandManifest(path: string): Promise<CommandManifest> {
  const text = await readFile(path, "utf8");
  const bytes = new TextEncoder().encode(text).byteLength;
  if (bytes > MAX_MANIFEST_BYTES) {
    throw new ConfigError(`${path}: ${bytes} bytes; a manifest is at most ${MAX_MANIFEST_BYTES}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${path}: not JSON (${(error as Error).message})`);
  }
  return parseCommandManifest(json, dirname(resolve(path)));
}

/** Checks a parsed 1.0 manifest; `baseDir` is the folder path-like executables resolve against. */
export function parseCommandManifest(value: unknown, baseDir: string): CommandManifest {
  const parsed = v.safeParse(ManifestSchema, value);
  if (!parsed.success) {
    const problems = parsed.issues.map((issue) => {
      const at = v.getDotPath(issue) || "manifest";
      return `${at}: ${issue.received === "undefined" ? "is required" : issue.message}`;
    });
    throw new ConfigError(`not a TraceFetch 1.0 manifest: ${problems.join("; ")}`);
  }
  const manifest: CommandManifest = { providers: [], skipped: [] };
  const seen = new Set<string>();
  for (const entry of parsed.output.providers) {
    if (seen.has(entry.name)) throw new ConfigError(`provider "${entry.name}" is listed twice`);
    seen.add(entry.name);
    if (entry.command === undefined) {
      manifest.skipped.push({ name: entry.name, reason: "no command" });
      continue;
    }
    if (entry.timeout_seconds === 0) {
      manifest.skipped.push({ name: entry.name, reason: "disabled (timeout_seconds 0)" });
      continue;
    }
    const [exe, ...args] = entry.command as [string, ...string[]];
    manifest.providers.push({
      name: entry.name,
      scope: entry.scope,
      command: entry.command,
      executable: exe.includes("/") ? resolve(baseDir, exe) : exe,
      args,
      timeoutMs: entry.timeout_seconds * 1_000,
    });
  }
  return manifest;
}
