/**
 * Runs the bundled worker (the same build as dist/worker.js: its main module and every chunk, the
 * extra modules included) in workerd through Miniflare, so a dynamic import resolves as deployed.
 */
import { build } from "esbuild";
import { Miniflare } from "miniflare";
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
    target: "es2022",
  });
  return (result.outputFiles[0] as { text: string }).text;
}

let built: Promise<WorkerModule[]> | null = null;

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
  } = {},
): Promise<Miniflare> {
  const build = options.viewerFile === undefined
    ? (built ??= bundleWorker({ withCorpus: true }))
    : bundleWorker({ withCorpus: true, viewerFile: options.viewerFile });
  const modules = (await build).filter((m) => !options.withoutExtraModules || m.loaded === "start");
  const mf = new Miniflare({
    // The main module first: workerd runs the first module listed.
    modules: modules.map((m) => ({ type: "ESModule" as const, path: m.path, contents: m.code })),
    compatibilityDate: "2026-04-26",
    compatibilityFlags: ["enable_request_signal"],
    bindings,
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
