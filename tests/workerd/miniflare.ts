/**
 * Runs the bundled worker (the same build as dist/worker.js: its main module and every chunk, the
 * extra modules included) in workerd through Miniflare, so a dynamic import resolves as deployed.
 */
import { build } from "esbuild";
import { Miniflare, type WorkerOptions } from "miniflare";
import { fileURLToPath } from "node:url";
import { bundleWorker, type WorkerModule } from "../../scripts/build-worker.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/**
 * A Worker entry written in a test (its imports relative to the repository root), bundled as
 * wrangler bundles a Worker: one ES module for workerd.
 */
export async function bundleEntry(entry: string, sourcefile: string): Promise<string> {
  const result = await build({
    stdin: { contents: entry, resolveDir: ROOT, loader: "ts", sourcefile },
    bundle: true,
    write: false,
    format: "esm",
    platform: "browser",
    conditions: ["workerd", "worker", "browser"],
    // workerd's own modules, as the worker build leaves them.
    external: ["cloudflare:*"],
    target: "es2022",
  });
  return (result.outputFiles[0] as { text: string }).text;
}

let built: Promise<WorkerModule[]> | null = null;

/** The bundled worker's name when workers run beside it, for their `scriptName`. */
export const GATEWAY_WORKER = "gateway";

export async function startWorker(
  bindings: Record<string, string>,
  options: {
    /** Drop workerd's own output: its HTTP client logs a stack trace for every malformed answer. */
    quiet?: boolean;
    /** Leave the extra modules out, as if they were never uploaded: only what loads at start. */
    withoutExtraModules?: boolean;
    /** Bundle this file as the /docs viewer script (a build of its own) instead of the package's. */
    viewerFile?: string;
    /** Open workerd's V8 inspector on this port (the bench profiles the worker through it). */
    inspectorPort?: number;
    /**
     * Durable Object namespaces of classes the main module exports, by binding name (binding to
     * class), SQLite-backed as wrangler.toml declares them; kept in memory.
     */
    durableObjects?: Record<string, string>;
    /** Workers run beside it in the same workerd, which may bind its namespaces by GATEWAY_WORKER. */
    besides?: WorkerOptions[];
    /**
     * A second gateway of this name, listed after it: the same build and bindings, its Durable
     * Object namespaces bound by GATEWAY_WORKER's `scriptName`, so both share one namespace.
     */
    twin?: string;
  } = {},
): Promise<Miniflare> {
  const build = options.viewerFile === undefined
    ? (built ??= bundleWorker({ withCorpus: true }))
    : bundleWorker({ withCorpus: true, viewerFile: options.viewerFile });
  const modules = (await build).filter((m) => !options.withoutExtraModules || m.loaded === "start");
  const durableObjects = Object.entries(options.durableObjects ?? {}).map((
    [binding, className],
  ) => [binding, { className, useSQLite: true }]);
  const gateway = {
    // The main module first: workerd runs the first module listed.
    modules: modules.map((m) => ({ type: "ESModule" as const, path: m.path, contents: m.code })),
    compatibilityDate: "2026-04-26",
    compatibilityFlags: ["enable_request_signal"],
    bindings,
    durableObjects: Object.fromEntries(durableObjects),
  };
  const twin = options.twin === undefined ? [] : [{
    ...gateway,
    name: options.twin,
    durableObjects: Object.fromEntries(
      Object.entries(options.durableObjects ?? {}).map((
        [binding, className],
      ) => [binding, { className, useSQLite: true, scriptName: GATEWAY_WORKER }]),
    ),
  }];
  const besides = [...twin, ...(options.besides ?? [])];
  const mf = new Miniflare({
    // With workers beside it, the gateway is the first: dispatchFetch reaches it.
    ...(besides.length === 0
      ? gateway
      : { workers: [{ name: GATEWAY_WORKER, ...gateway }, ...besides] }),
    ...(options.inspectorPort === undefined ? {} : { inspectorPort: options.inspectorPort }),
    ...(options.quiet
      ? {
        handleRuntimeStdio: (stdout: NodeJS.ReadableStream, stderr: NodeJS.ReadableStream) => {
          stdout.resume();
          stderr.resume();
        },
      }
      : {}),
  });
  await mf.ready;
  return mf;
}
