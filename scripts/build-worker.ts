/**
 * Builds the Cloudflare Worker with esbuild, split into modules: a main module, which the isolate
 * loads at start, and extra modules, each loaded by a dynamic `import()` the first time its code is
 * needed (the JSON Schemas, the OpenAPI document, the remote built-ins, and with
 * TRACEFETCH_API_DOCS=1 at build time the /docs viewer, about 1 MB gzipped, else left out). Writes
 * dist/worker.js (deployable, the workspace corpus included) with its chunks in dist/worker/, and
 * dist/worker-code.js with dist/worker-code/ (the same build without the corpus), and prints the
 * sizes: the main module's, then each extra module's. With --check, fails when the minified,
 * gzipped main module of the code-only build is over the budget.
 */
import { build, type Metafile, type Plugin } from "esbuild";
import { mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { loadCorpus } from "../providers/corpus/load-corpus.ts";
import { viewerFile } from "../src/runtime/api-docs-viewer.ts";
import { flag, readVariables } from "../src/config/env-values.ts";

/**
 * The main module's code alone, gzipped: the entry and the chunks it imports statically, which the
 * isolate loads at start, without the corpus; extra modules, loaded by a dynamic import when first
 * needed, are not counted. Workers' free plan allows 3 MB in all, and a small isolate starts
 * faster; 64 KiB holds the gateway with its hardening, the provider contract's verbs and the
 * Durable Object class of the shared state (which the main module must export), while
 * anything large and optional (the JSON Schemas, the remote built-ins, an MCP endpoint, a page)
 * ships as an extra module.
 */
export const WORKER_CODE_BUDGET_BYTES = 64 * 1024;

const root = new URL("../", import.meta.url);

/** Serves the build-time modules the worker imports (see src/runtime/virtual-modules.d.ts). */
function virtualModules(
  corpus: string | null,
  manifest: string | null,
  viewer: string | null,
): Plugin {
  const modules: Record<string, string> = {
    // The corpus and the engine that indexes it travel together: the code-only build has neither.
    "tracefetch:workspace": corpus === null
      ? "export default null;"
      : `import { corpusAdapter } from "./providers/corpus/corpus-adapter.ts";\n` +
        `export default corpusAdapter("workspace", "local", ${corpus});`,
    "tracefetch:bundled-manifest": `export default ${JSON.stringify(manifest)};`,
    // The loader of the viewer's module, or null for a build without it: the main module imports
    // this one, never the viewer's text.
    "tracefetch:api-docs-viewer": viewer === null
      ? "export default null;"
      : 'export default () => import("tracefetch:api-docs-viewer-script").then((m) => m.default);',
    "tracefetch:api-docs-viewer-script": `export default ${JSON.stringify(viewer)};`,
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

/**
 * One module of a worker build. `path` is relative to the main module's folder, as wrangler and
 * workerd name modules and as the modules import one another.
 */
export type WorkerModule = {
  path: string;
  code: string;
  /** `start`: the main module and the chunks it imports statically; `on_demand`: the others. */
  loaded: "start" | "on_demand";
  /** The file it starts from: the entry, or what a dynamic import names; null for shared code. */
  source: string | null;
  /** The files bundled into it, relative to the repository. */
  inputs: string[];
};

const ENTRY = "src/runtime/worker.ts";

/**
 * Bundles the worker in memory; `withCorpus: false` gives the code-only build. The main module is
 * `${name}.js`, first in the list, then the chunks it imports, then the extra modules; every chunk
 * is `${name}/*.js`, named by its content's hash, so a new build never overwrites an old one's.
 */
export async function bundleWorker(
  options: {
    withCorpus: boolean;
    manifestFile?: string | undefined;
    name?: string;
    /** The /docs viewer script to bundle (viewerForBuild); none by default. */
    viewerFile?: string | null;
  },
): Promise<WorkerModule[]> {
  const name = options.name ?? "worker";
  const corpus = options.withCorpus
    ? JSON.stringify(await loadCorpus(fileURLToPath(new URL("docs", root)), "docs/"))
    : null;
  const manifest = options.manifestFile ? await readFile(options.manifestFile, "utf8") : null;
  const viewerPath = options.viewerFile ?? null;
  const viewer = viewerPath === null ? null : await readFile(viewerPath, "utf8");
  const result = await build({
    absWorkingDir: fileURLToPath(root),
    entryPoints: { [name]: ENTRY },
    bundle: true,
    // Each dynamic import() becomes a module of its own; code it shares with others, a chunk.
    splitting: true,
    write: false,
    // Never written there by esbuild (write: false): it only names the files.
    outdir: "dist",
    entryNames: "[name]",
    chunkNames: `${name}/[name]-[hash]`,
    metafile: true,
    format: "esm",
    platform: "browser",
    conditions: ["workerd", "worker", "browser"],
    // The runtime's own modules (the Durable Object base class) are workerd's, never bundled.
    external: ["cloudflare:*"],
    target: "es2022",
    minify: true,
    legalComments: "none",
    plugins: [virtualModules(corpus, manifest, viewer)],
  });
  const outputs = result.metafile.outputs;
  const main = `${name}.js`;
  const atStart = staticClosure(outputs, `dist/${main}`);
  const modules = result.outputFiles.map((file): WorkerModule => {
    const path = relative(fileURLToPath(new URL("dist/", root)), file.path).replaceAll("\\", "/");
    return {
      path,
      code: file.text,
      loaded: atStart.has(`dist/${path}`) ? "start" : "on_demand",
      source: outputs[`dist/${path}`]?.entryPoint ?? null,
      inputs: Object.keys(outputs[`dist/${path}`]?.inputs ?? {}),
    };
  });
  if (!modules.some((m) => m.path === main)) throw new Error(`esbuild wrote no ${main}`);
  return modules.sort((a, b) =>
    Number(b.path === main) - Number(a.path === main) ||
    Number(b.loaded === "start") - Number(a.loaded === "start") || a.path.localeCompare(b.path)
  );
}

/**
 * The /docs viewer a build carries: the installed package's when TRACEFETCH_API_DOCS is on where
 * the worker is built, else none. /docs is off on Workers unless the var turns it on, and a viewer
 * nobody turned on would still be uploaded with every deploy (about 1 MB gzipped).
 */
export function viewerForBuild(env: Record<string, string | undefined>): string | null {
  return apiDocsOn(env) ? viewerFile() : null;
}

/** TRACEFETCH_API_DOCS as the gateway reads it. */
function apiDocsOn(env: Record<string, string | undefined>): boolean {
  return readVariables(env, { TRACEFETCH_API_DOCS: flag() }).TRACEFETCH_API_DOCS;
}

/** The output and every output it imports statically, transitively: what loads with it. */
function staticClosure(outputs: Metafile["outputs"], key: string): Set<string> {
  const seen = new Set<string>();
  const visit = (k: string) => {
    if (seen.has(k)) return;
    seen.add(k);
    for (const i of outputs[k]?.imports ?? []) {
      if (i.kind === "import-statement" && !i.external) visit(i.path);
    }
  };
  visit(key);
  return seen;
}

/**
 * Writes a build into `dir` for a reader that reloads when a file there changes (wrangler dev): the
 * chunks no longer imported are removed first, then the new ones are added, and the main module,
 * which imports them, is replaced last; each is written in `staging` (on the same file system) and
 * renamed into place, and a file already there with the same text is left alone. So the one file
 * that changes is the main module, once everything it imports is in place; wrangler, which lists
 * the folder and reads every file when the main module changes, never meets a file that is gone.
 */
export async function writeWorker(
  modules: WorkerModule[],
  dir: URL,
  staging: URL,
): Promise<void> {
  const [main, ...chunks] = modules;
  if (main === undefined) throw new Error("a worker build has a main module");
  const chunkDir = new URL(main.path.replace(/\.js$/, "/"), dir);
  await mkdir(chunkDir, { recursive: true });
  const kept = new Set(chunks.map((m) => fileURLToPath(new URL(m.path, dir))));
  for (const entry of await readdir(chunkDir)) {
    const file = fileURLToPath(new URL(entry, chunkDir));
    if (!kept.has(file)) await rm(file, { recursive: true, force: true });
  }
  await rm(staging, { recursive: true, force: true });
  for (const m of [...chunks, main]) {
    const existing = await readFile(new URL(m.path, dir), "utf8").catch(() => null);
    if (existing === m.code) continue;
    const file = new URL(m.path, staging);
    await mkdir(dirname(fileURLToPath(file)), { recursive: true });
    await writeFile(file, m.code);
    await rename(file, new URL(m.path, dir));
  }
  await rm(staging, { recursive: true, force: true });
}

/**
 * Modules' size, minified and gzipped. Gzipped as wrangler counts a Worker's upload: the files as
 * one stream, so splitting code into chunks neither hides bytes nor costs a header per file.
 */
function sizes(modules: WorkerModule[]): { raw: number; gz: number } {
  const code = modules.map((m) => m.code).join("");
  return { raw: Buffer.byteLength(code), gz: gzipSync(code).byteLength };
}

function kib(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KiB`;
}

async function main() {
  const check = process.argv.includes("--check");
  const manifestFile = process.env.TRACEFETCH_MANIFEST_FILE;
  const docs = viewerForBuild(process.env);
  if (apiDocsOn(process.env) && docs === null) {
    console.error(
      "TRACEFETCH_API_DOCS is on, but @scalar/api-reference is not installed: built without the /docs viewer",
    );
  }
  console.log(
    docs === null
      ? "/docs viewer: not bundled; /docs answers 404 saying how to turn it on (TRACEFETCH_API_DOCS=1 at build time bundles it)"
      : `/docs viewer: bundled from ${
        relative(fileURLToPath(root), docs)
      } (TRACEFETCH_API_DOCS is on)`,
  );
  const dist = new URL("dist/", root);
  await mkdir(dist, { recursive: true });
  let codeGz = Infinity;
  for (const [name, withCorpus] of [["worker", true], ["worker-code", false]] as const) {
    const modules = await bundleWorker({ withCorpus, manifestFile, name, viewerFile: docs });
    await writeWorker(modules, dist, new URL(`.${name}-staging/`, dist));
    const atStart = modules.filter((m) => m.loaded === "start");
    const main = sizes(atStart);
    const chunks = atStart.length - 1;
    console.log(
      `dist/${name}.js: ${kib(main.raw)} minified, ${kib(main.gz)} gzipped: the main module${
        chunks === 0 ? "" : ` with the ${chunks} chunk${chunks === 1 ? "" : "s"} it imports`
      }${withCorpus ? ", the workspace corpus included" : ", code only"}`,
    );
    if (withCorpus) {
      for (const m of modules.filter((m) => m.loaded === "on_demand")) {
        const size = sizes([m]);
        console.log(
          `dist/${m.path}: ${kib(size.raw)} minified, ${kib(size.gz)} gzipped: an extra module, ${
            m.source ?? "code shared by extra modules"
          }`,
        );
      }
    } else {
      codeGz = main.gz;
    }
  }
  if (check && codeGz > WORKER_CODE_BUDGET_BYTES) {
    console.error(
      `the main module of dist/worker-code.js is ${kib(codeGz)} gzipped, over the ${
        WORKER_CODE_BUDGET_BYTES / 1024
      } KiB budget`,
    );
    process.exit(1);
  }
  if (check) {
    console.log(
      `bundle budget: main module ${kib(codeGz)} of ${
        WORKER_CODE_BUDGET_BYTES / 1024
      } KiB gzipped: ok`,
    );
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
