/**
 * The kit as an author outside this repository gets it: this project packed with `npm pack` (whose
 * prepack builds the kit into dist/kit), the tarball installed from the npm cache into an empty
 * project, and programs started there the way an author starts them, each printing the endpoint it
 * serves as `listening at http://127.0.0.1:PORT/search`.
 */
import assert from "node:assert/strict";
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { cleanEnv } from "./cli.ts";

const run = promisify(execFile);

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/**
 * Every prepack deletes and rebuilds dist/kit, so two test files packing at once could pack each
 * other's half-built folder: packing takes this lock (a directory, created atomically).
 */
const PACK_LOCK = join(ROOT, "dist", ".pack-lock");
/** A pack takes seconds; a lock older than this was left by a run that died. */
const STALE_PACK_LOCK_MS = 120_000;
/** How often a waiting pack looks at the lock again. */
const PACK_LOCK_POLL_MS = 200;
/** How long a started program has to print its endpoint. */
const START_TIMEOUT_MS = 10_000;

async function withPackLock<T>(work: () => Promise<T>): Promise<T> {
  await mkdir(join(ROOT, "dist"), { recursive: true });
  for (;;) {
    try {
      await mkdir(PACK_LOCK);
      break;
    } catch (error) {
      if ((error as { code?: string }).code !== "EEXIST") throw error;
      const age = await stat(PACK_LOCK).then((s) => Date.now() - s.mtimeMs, () => 0);
      if (age > STALE_PACK_LOCK_MS) await rm(PACK_LOCK, { recursive: true, force: true });
      else await new Promise((resolve) => setTimeout(resolve, PACK_LOCK_POLL_MS));
    }
  }
  try {
    return await work();
  } finally {
    await rm(PACK_LOCK, { recursive: true, force: true });
  }
}

export type KitProject = {
  /** The project's folder: package.json (type module) and node_modules/tracefetch-edge. */
  dir: string;
  /** Removes the project and the tarball. */
  remove: () => Promise<void>;
};

/** Packs this project once and installs the tarball into a new, empty project. */
export async function packedKitProject(): Promise<KitProject> {
  const packs = await mkdtemp(join(tmpdir(), "tracefetch-pack-"));
  const dir = await mkdtemp(join(tmpdir(), "tracefetch-kit-user-"));
  const remove = async () => {
    for (const folder of [dir, packs]) await rm(folder, { recursive: true, force: true });
  };
  try {
    const env = cleanEnv();
    await withPackLock(() => run("npm", ["pack", "--pack-destination", packs], { cwd: ROOT, env }));
    const [tarball] = (await readdir(packs)).filter((f) => f.endsWith(".tgz"));
    assert.ok(tarball, "npm pack wrote a tarball");
    await writeFile(
      join(dir, "package.json"),
      JSON.stringify({ name: "kit-user", private: true, type: "module" }),
    );
    await run("npm", [
      "install",
      "--prefer-offline",
      "--no-audit",
      "--no-fund",
      "--ignore-scripts",
      join(packs, tarball),
    ], { cwd: dir, env });
  } catch (error) {
    await remove();
    throw error;
  }
  return { dir, remove };
}

export type Started = { url: string; stop: () => Promise<void> };

/**
 * Runs `command args` in `cwd` with a clean environment (plus `env`) and resolves with the
 * endpoint it prints; fails with what it printed when it exits or prints nothing in time.
 */
export async function startProgram(
  cwd: string,
  command: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<Started> {
  const child: ChildProcess = spawn(command, args, {
    cwd,
    env: { ...cleanEnv(), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const stop = () =>
    new Promise<void>((done) => {
      if (child.exitCode !== null || child.signalCode !== null) return done();
      child.once("exit", () => done());
      child.kill();
    });
  let out = "";
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${command} ${args.join(" ")} printed no endpoint: ${out}`)),
        START_TIMEOUT_MS,
      );
      child.stdout?.on("data", (chunk: Buffer) => {
        out += chunk.toString("utf8");
        const match = /listening at (http:\/\/127\.0\.0\.1:\d+\/search)/.exec(out);
        if (match) {
          clearTimeout(timer);
          resolve(match[1] as string);
        }
      });
      child.stderr?.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
      child.once("error", (error) => {
        clearTimeout(timer);
        reject(error);
      });
      child.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`${command} ${args.join(" ")} exited with ${code}: ${out}`));
      });
    });
    return { url, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Starts `node FILE ARGS` in the project, as an author runs a provider written in JavaScript. */
export function startProvider(
  project: string,
  file: string,
  args: string[] = [],
  env: Record<string, string> = {},
): Promise<Started> {
  // "node", not process.execPath: under `deno test` that is deno.
  return startProgram(project, "node", [file, ...args], env);
}
