/**
 * Builds the Cloudflare Worker with esbuild: dist/worker.js (deployable, the workspace corpus
 * included) and dist/worker-code.js (the same build without the corpus), and prints both sizes.
 * With --check, fails when the minified, gzipped worker-code.js is over the budget.
 */
import { build, type Plugin } from "esbuild";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { loadCorpus } from "../providers/corpus/load-corpus.ts";

/**
 * The main module's code alone, gzipped. Workers' free plan allows 3 MB, and a small isolate
 * starts faster; 56 KiB holds the gateway with its hardening and the provider contract's verbs,
 * while anything large and optional (an MCP endpoint, a page) ships as a module of its own.
 */
export const WORKER_CODE_BUDGET_BYTES = 56 * 1024;

const root = new URL("../", import.meta.url);

/** Serves the build-time modules the worker imports (see src/runtime/virtual-modules.d.ts). */
function virtualModules(corpus: string | null, manifest: string | null): Plugin {
  const modules: Record<string, string> = {
    // The corpus and the engine that indexes it travel together: the code-only build has neither.
    "tracefetch:workspace": corpus === null
      ? "export default null;"
      : `import { corpusAdapter } from "./providers/corpus/corpus-adapter.ts";\n` +
        `export default corpusAdapter("workspace", "local", ${corpus});`,
    "tracefetch:bundled-manifest": `export default ${JSON.stringify(manifest)};`,
  };
  return {
    name: "tracefetch-virtual",
    setup(b) {
      b.onResolve(
        { filter: /^tracefetch:/ },
        (args) => ({ path: args.path, namespace: "tracefetch" }),
      );
      // The gateway reads only `version` from package.json: bundle that, not the whole file.
      b.onLoad({ filter: /[\\/]package\.json$/ }, async (args) => ({
        contents: JSON.stringify({
          version: JSON.parse(await readFile(args.path, "utf8")).version,
        }),
        loader: "json",
      }));
      b.onLoad({ filter: /.*/, namespace: "tracefetch" }, (args) => {
        const contents = modules[args.path];
        if (contents === undefined) throw new Error(`unknown virtual module ${args.path}`);
        return { contents, loader: "js", resolveDir: fileURLToPath(root) };
      });
    },
  };
}

/** Bundles the worker in memory; `withCorpus: false` gives the code-only build. */
export async function bundleWorker(
  options: { withCorpus: boolean; manifestFile?: string | undefined },
): Promise<string> {
  const corpus = options.withCorpus
    ? JSON.stringify(await loadCorpus(fileURLToPath(new URL("docs", root)), "docs/"))
    : null;
  const manifest = options.manifestFile ? await readFile(options.manifestFile, "utf8") : null;
  const result = await build({
    entryPoints: [fileURLToPath(new URL("src/runtime/worker.ts", root))],
    bundle: true,
    write: false,
    format: "esm",
    platform: "browser",
    conditions: ["workerd", "worker", "browser"],
    target: "es2022",
    minify: true,
    legalComments: "none",
    plugins: [virtualModules(corpus, manifest)],
  });
  return (result.outputFiles[0] as { text: string }).text;
}

async function main() {
  const check = process.argv.includes("--check");
  const manifestFile = process.env.TRACEFETCH_MANIFEST_FILE;
  await mkdir(new URL("dist/", root), { recursive: true });
  const sizes: Array<[string, number, number]> = [];
  for (const [file, withCorpus] of [["worker.js", true], ["worker-code.js", false]] as const) {
    const code = await bundleWorker({ withCorpus, manifestFile });
    await writeFile(new URL(`dist/${file}`, root), code);
    sizes.push([file, code.length, gzipSync(code).byteLength]);
  }
  for (const [file, raw, gz] of sizes) {
    console.log(
      `dist/${file}: ${(raw / 1024).toFixed(1)} KiB minified, ${
        (gz / 1024).toFixed(1)
      } KiB gzipped`,
    );
  }
  const code = sizes.find(([f]) => f === "worker-code.js")?.[2] ?? Infinity;
  if (check && code > WORKER_CODE_BUDGET_BYTES) {
    console.error(
      `dist/worker-code.js is ${(code / 1024).toFixed(1)} KiB gzipped, over the ${
        WORKER_CODE_BUDGET_BYTES / 1024
      } KiB budget`,
    );
    process.exit(1);
  }
  if (check) {
    console.log(
      `bundle budget: ${(code / 1024).toFixed(1)} of ${
        WORKER_CODE_BUDGET_BYTES / 1024
      } KiB gzipped: ok`,
    );
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
