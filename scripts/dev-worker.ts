/**
 * `npm run dev:worker`: the worker under `wrangler dev`, offline and with no login, configured by
 * the same variables as `npm start`. TRACEFETCH_MANIFEST (a file path or inline JSON) and the other
 * TRACEFETCH_* variables reach the worker as vars; without a manifest, the embedded default's example
 * providers run beside it in Node on free loopback ports, so it answers as `npm start` does. PORT
 * (default 8787) and HOST as for `npm start`; arguments after `--` go to `wrangler dev`.
 *
 * The worker is built here, once per start and again when src/, providers/ or docs/ change, into
 * dist/dev/worker.js and its chunks in dist/dev/worker/ (never the deployable dist/worker.js);
 * wrangler's dev environment has no build step of its own and reloads when a build lands. Wrangler
 * and workerd run in a process group of their own that is stopped as a whole on SIGINT, SIGTERM and
 * SIGHUP, so the port is free once this process has exited.
 */
import { stop as stopEsbuild } from "esbuild";
import { type ChildProcess, spawn } from "node:child_process";
import { type FSWatcher, realpathSync, watch } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { startEmbeddedDefault } from "../providers/corpus/embedded-default.ts";
import type { Env } from "../src/config/env-values.ts";
import { readSettings } from "../src/config/settings.ts";
import { ConfigError } from "../src/protocol/config-error.ts";
import { listenProblem } from "../src/config/start-problems.ts";
import { readManifest } from "../src/runtime/launch.ts";
import { listen } from "../src/runtime/node-listen.ts";
import { bundleWorker, viewerForBuild, writeWorker } from "./build-worker.ts";

/** Keeps wrangler from reaching the network: no metrics, no account look-ups, no banner. */
export const WRANGLER_OFFLINE_ENV = {
  WRANGLER_SEND_METRICS: "false",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
  WRANGLER_HIDE_BANNER: "true",
};

/**
 * Workers hold at most 5 KB in one var or secret; counted as 5,000 bytes, the stricter reading, so
 * a manifest that fits here fits when deployed. A larger one is bundled into the build instead.
 */
export const WORKERS_VAR_MAX_BYTES = 5_000;

/** Wrangler stops workerd in well under a second on SIGINT; past this the group is killed. */
const STOP_GRACE_MS = 5_000;

/** A save or a formatter writes several files in a burst: one rebuild per burst. */
const REBUILD_DEBOUNCE_MS = 200;

/** How often the stop checks whether the process group is gone. */
const STOP_POLL_MS = 50;

/** TRACEFETCH_* variables the worker does not read: the CLI's token, build-time and tooling ones. */
const NOT_FOR_THE_WORKER = /^TRACEFETCH_(MANIFEST|MANIFEST_FILE|TOKEN|DEV_.*|FUZZ_.*)$/;

const root = new URL("../", import.meta.url);
const OUT_PATH = "dist/dev/worker.js";
const OUT_DIR = new URL("dist/dev/", root);
const OUT_FILE = new URL(OUT_PATH, root);
/** Written beside OUT_DIR, not in it: wrangler reloads on every change in the entry's folder. */
const STAGING_DIR = new URL("dist/dev-worker.partial/", root);
const WATCHED = ["src", "providers", "docs"];

/** What the worker gets from the environment, before any example provider is started. */
export type WorkerPlan = {
  /** `--var` bindings, by name. */
  vars: Record<string, string>;
  /** A manifest to bundle into the build: TRACEFETCH_MANIFEST_FILE's, or one too large for a var. */
  bundledManifest: string | null;
  /** Start the embedded default's example providers and pass their manifest as a var. */
  embeddedDefault: boolean;
  /** Lines for the operator: what was done differently from what was asked. */
  notes: string[];
  host: string;
  port: number;
};

/**
 * Reads the environment as `npm start` does; throws ConfigError (one line naming the variable) for
 * a value that is not understood or a manifest file that cannot be read.
 */
export async function planWorker(env: Env): Promise<WorkerPlan> {
  const settings = readSettings(env).env;
  const vars: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (
      name.startsWith("TRACEFETCH_") && !NOT_FOR_THE_WORKER.test(name) &&
      value !== undefined && value.trim() !== ""
    ) vars[name] = value;
  }
  const notes: string[] = [];
  const manifestFile = env.TRACEFETCH_MANIFEST_FILE?.trim() || null;
  let bundledManifest = manifestFile === null
    ? null
    : await readManifest(manifestFile, "TRACEFETCH_MANIFEST_FILE");
  if (settings.manifest !== null) {
    const text = compact(
      settings.manifest.startsWith("{")
        ? settings.manifest
        : await readManifest(settings.manifest, "TRACEFETCH_MANIFEST"),
    );
    const bytes = new TextEncoder().encode(text).byteLength;
    if (bytes <= WORKERS_VAR_MAX_BYTES) {
      vars.TRACEFETCH_MANIFEST = text;
    } else {
      bundledManifest = text;
      notes.push(
        `the manifest is ${bytes} bytes, over the ${WORKERS_VAR_MAX_BYTES} a Workers var or secret holds: bundled into this build instead; to deploy it, bundle it the same way with TRACEFETCH_MANIFEST_FILE=<path> npm run build:worker (docs/deploy.md)`,
      );
    }
  }
  const embeddedDefault = settings.manifest === null && bundledManifest === null;
  // As for `npm start`: the example providers listen on loopback; your own manifest needs the
  // variable, whatever the dev environment in wrangler.toml allows.
  if (embeddedDefault) vars.TRACEFETCH_ALLOW_LOOPBACK = "1";
  else vars.TRACEFETCH_ALLOW_LOOPBACK ??= "0";
  return {
    vars,
    bundledManifest,
    embeddedDefault,
    notes,
    host: settings.host,
    port: settings.port,
  };
}

/**
 * One line of JSON when the text parses, so more manifests fit a var; as given otherwise, for the
 * worker to refuse in its own words.
 */
function compact(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return text;
  }
}

/**
 * Whether HOST and PORT can be listened on, asked before anything starts so that the answer is
 * `npm start`'s one line naming the variable rather than workerd's stack trace.
 */
async function addressProblem(host: string, port: number): Promise<string | null> {
  if (port === 0) return null;
  const probe = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once("error", reject);
      probe.listen(port, host, resolve);
    });
  } catch (error) {
    const problem = listenProblem(error, host, port);
    if (problem === null) throw error;
    return problem;
  }
  await new Promise((resolve) => probe.close(resolve));
  return null;
}

/**
 * Builds dist/dev/worker.js and its chunks; each file is replaced whole and the main module last,
 * so wrangler never loads half a build.
 */
async function buildWorker(manifestFile: string | undefined): Promise<number> {
  const started = performance.now();
  // The /docs viewer only when TRACEFETCH_API_DOCS turns /docs on, as npm run build:worker does.
  const modules = await bundleWorker({
    withCorpus: true,
    manifestFile,
    viewerFile: viewerForBuild(process.env),
  });
  await mkdir(OUT_DIR, { recursive: true });
  await writeWorker(modules, OUT_DIR, STAGING_DIR);
  return Math.round(performance.now() - started);
}

/**
 * Rebuilds after edits under WATCHED, one build at a time; a failed build keeps the last one.
 * Returns the stop.
 */
function watchSources(manifestFile: string | undefined): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let building: Promise<void> = Promise.resolve();
  const changed = new Set<string>();
  const rebuild = () => {
    const files = [...changed].join(", ");
    changed.clear();
    building = building.then(async () => {
      try {
        const ms = await buildWorker(manifestFile);
        console.log(`dev:worker: ${files} changed: rebuilt in ${ms} ms`);
      } catch (error) {
        console.error(
          `dev:worker: ${files} changed: the build failed, the last one keeps running: ${
            (error as Error).message
          }`,
        );
      }
    });
  };
  const watchers: FSWatcher[] = WATCHED.map((dir) =>
    watch(fileURLToPath(new URL(dir, root)), { recursive: true }, (_event, file) => {
      changed.add(`${dir}/${file ?? ""}`);
      clearTimeout(timer);
      timer = setTimeout(rebuild, REBUILD_DEBOUNCE_MS);
    }).on("error", (error) => {
      console.error(`dev:worker: no longer watching ${dir}/: ${error.message}`);
    })
  );
  return () => {
    clearTimeout(timer);
    for (const watcher of watchers) watcher.close();
  };
}

/** Wrangler's own entry, run with this Node: no npx or shell between us and its process group. */
function wranglerBin(): string {
  return createRequire(import.meta.url).resolve("wrangler/bin/wrangler.js");
}

const OWN_GROUP = process.platform !== "win32";

/** Sends a signal to wrangler and everything it started; false once they are all gone. */
function signalGroup(child: ChildProcess, signal: NodeJS.Signals | 0): boolean {
  if (child.pid === undefined) return false;
  try {
    if (OWN_GROUP) process.kill(-child.pid, signal);
    else if (signal !== 0) child.kill(signal);
    else return child.exitCode === null && child.signalCode === null;
    return true;
  } catch {
    return false;
  }
}

async function groupGone(child: ChildProcess, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (signalGroup(child, 0)) {
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, STOP_POLL_MS));
  }
  return true;
}

/** SIGINT to the whole group (wrangler stops workerd), then SIGKILL for whatever is left. */
async function stopGroup(child: ChildProcess): Promise<void> {
  signalGroup(child, "SIGINT");
  if (await groupGone(child, STOP_GRACE_MS)) return;
  signalGroup(child, "SIGKILL");
  await groupGone(child, STOP_GRACE_MS);
}

async function main(): Promise<void> {
  let plan: WorkerPlan;
  try {
    plan = await planWorker(process.env);
    const problem = await addressProblem(plan.host, plan.port);
    if (problem !== null) throw new ConfigError(problem);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`tracefetch: ${error.message}`);
    process.exit(2);
  }
  for (const line of plan.notes) console.error(`dev:worker: ${line}`);
  let manifestFile: string | undefined;
  if (plan.bundledManifest !== null) {
    manifestFile = fileURLToPath(new URL("dist/dev-manifest.json", root));
    await mkdir(new URL("dist/", root), { recursive: true });
    await writeFile(manifestFile, plan.bundledManifest);
  }
  const ms = await buildWorker(manifestFile);
  console.log(`dev:worker: built ${OUT_PATH} in ${ms} ms`);

  const embedded = plan.embeddedDefault ? await startEmbeddedDefault(listen) : null;
  if (embedded) plan.vars.TRACEFETCH_MANIFEST = JSON.stringify(embedded.manifest);
  const stopWatching = watchSources(manifestFile);
  const wrangler = spawn(process.execPath, [
    wranglerBin(),
    "dev",
    fileURLToPath(OUT_FILE),
    "--env",
    "dev",
    "--ip",
    plan.host,
    "--port",
    String(plan.port),
    ...Object.entries(plan.vars).flatMap(([name, value]) => ["--var", `${name}:${value}`]),
    ...process.argv.slice(2),
  ], {
    // Its own process group, so that a signal to this process alone still stops workerd. A
    // terminal's Ctrl-C no longer reaches it directly, nor may it read the terminal: this process
    // passes the stop on.
    detached: OWN_GROUP,
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, ...WRANGLER_OFFLINE_ENV },
  });
  // The last resort when this process ends some other way (an uncaught error, process.exit).
  process.on("exit", () => void signalGroup(wrangler, "SIGKILL"));

  let stopping: Promise<never> | null = null;
  const shutdown = (code: number) => {
    // A terminal's Ctrl-C may arrive twice (from the terminal and from npm): one stop is enough.
    stopping ??= (async () => {
      stopWatching();
      await stopGroup(wrangler);
      await embedded?.close();
      // esbuild's service process would otherwise outlive this one by a moment.
      await stopEsbuild();
      process.exit(code);
    })();
  };
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.on(signal, () => shutdown(0));
  }
  wrangler.once("exit", (code, signal) => shutdown(code ?? (signal ? 1 : 0)));
}

// Compared by real path: run through a symlinked folder, argv names the link.
if (process.argv[1] && fileURLToPath(import.meta.url) === realpathSync(process.argv[1])) {
  await main();
}
