/** Runs the bundled worker (the same build as dist/worker.js) in workerd through Miniflare. */
import { Miniflare } from "miniflare";
import { bundleWorker } from "../../scripts/build-worker.ts";

let code: Promise<string> | null = null;

export async function startWorker(
  bindings: Record<string, string>,
  /** Drop workerd's own output: its HTTP client logs a stack trace for every malformed answer. */
  options: { quiet?: boolean } = {},
): Promise<Miniflare> {
  code ??= bundleWorker({ withCorpus: true });
  const mf = new Miniflare({
    modules: true,
    script: await code,
    compatibilityDate: "2026-04-26",
    compatibilityFlags: ["enable_request_signal"],
    bindings,
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
