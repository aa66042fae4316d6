/**
 * Runs the real `tracefetch` bin (node bin/tracefetch.js) as a subprocess with its own config
 * folder and NO_COLOR, and reads machine-mode stdout as exactly one envelope.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import { assertEnvelope } from "./gateway.ts";

const BIN = fileURLToPath(new URL("../../bin/tracefetch.js", import.meta.url));

export type CliRun = { code: number | null; stdout: string; stderr: string };

export type CliOptions = {
  /** Variables on top of a clean environment (no TRACEFETCH_* of the runner's leaks in). */
  env?: Record<string, string>;
  /** Written to stdin, which is then closed; stdin is empty otherwise. */
  input?: string | Uint8Array;
  /** XDG_CONFIG_HOME for this run. */
  config?: string;
};

/** The runner's environment without TRACEFETCH_* or FORCE_COLOR, so no setting leaks into a run. */
export function cleanEnv(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter((entry): entry is [string, string] =>
      !entry[0].startsWith("TRACEFETCH_") && entry[0] !== "FORCE_COLOR" && entry[1] !== undefined
    ),
  );
}

export function runCli(args: string[], options: CliOptions = {}): Promise<CliRun> {
  const base = cleanEnv();
  // "node", not process.execPath: under `deno test` that is deno, and the bin is for Node.
  const child = spawn("node", [BIN, ...args], {
    env: {
      ...base,
      NO_COLOR: "1",
      ...(options.config ? { XDG_CONFIG_HOME: options.config } : {}),
      ...options.env,
    },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on("data", (c: Buffer) => out.push(c));
  child.stderr.on("data", (c: Buffer) => err.push(c));
  child.stdin.on("error", () => {}); // the CLI may stop reading at the cap
  child.stdin.end(options.input ?? "");
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) =>
      resolve({
        code,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
      }));
  });
}

/**
 * Runs with --json and checks the machine-mode contract: stdout is exactly one JSON object on one
 * line, a valid envelope, and the exit code is its exit_code.
 */
export async function runJson(args: string[], options: CliOptions = {}) {
  const run = await runCli([...args, "--json"], options);
  const lines = run.stdout.split("\n");
  assert.equal(
    lines.length,
    2,
    `one line and its newline on stdout:\n${run.stdout}\n${run.stderr}`,
  );
  assert.equal(lines[1], "");
  const envelope = assertEnvelope(JSON.parse(lines[0] as string));
  assert.equal(
    run.code,
    envelope.exit_code,
    `exit code ${run.code} vs ${JSON.stringify(envelope)}`,
  );
  return { ...run, envelope };
}

/** A fresh config folder, removed by the returned function. */
export async function tempConfig(): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "tracefetch-cli-"));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}
