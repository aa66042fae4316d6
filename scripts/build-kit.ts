/**
 * Builds the provider kit for the package (`npm pack` runs it as `prepack`): JavaScript with `.d.ts`
 * files in dist/kit, one per module the kit's two entries reach (tsconfig.kit.json), so plain Node
 * loads `tracefetch-edge/kit` and `tracefetch-edge/kit/node` from node_modules. Then it checks that
 * no Node module is reachable from the Worker-safe entry, and prints the size.
 */
import { spawnSync } from "node:child_process";
import { readdir, readFile, rm, stat } from "node:fs/promises";
import { builtinModules, createRequire } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../", import.meta.url));
/** Where the kit is built; package.json's `exports` and `files` name the same folder. */
export const KIT_OUT = join(root, "dist", "kit");
/** The entry that must run on Workers, and the Node-only one. */
export const KIT_ENTRY = join(KIT_OUT, "kit", "mod.js");
export const KIT_NODE_ENTRY = join(KIT_OUT, "kit", "node", "mod.js");

const IMPORT =
  /(?:^|[\s;])(?:import|export)\s[^"';]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)|^import\s*["']([^"']+)["']/gm;
const NODE_BUILTINS = new Set(builtinModules);

/** Every module specifier a built file imports. */
function specifiers(code: string): string[] {
  return [...code.matchAll(IMPORT)].map((m) => (m[1] ?? m[2] ?? m[3]) as string);
}

/** The Node modules reachable from `entry` through relative imports, as "file: specifier". */
export async function nodeImportsFrom(entry: string): Promise<string[]> {
  const found: string[] = [];
  const seen = new Set<string>();
  const queue = [entry];
  for (let file = queue.pop(); file !== undefined; file = queue.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    for (const spec of specifiers(await readFile(file, "utf8"))) {
      if (spec.startsWith(".")) queue.push(resolve(dirname(file), spec));
      else if (spec.startsWith("node:") || NODE_BUILTINS.has(spec.split("/")[0] as string)) {
        found.push(`${relative(root, file)}: ${spec}`);
      }
    }
  }
  return found;
}

async function size(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) total += (await stat(join(entry.parentPath, entry.name))).size;
  }
  return total;
}

async function main() {
  await rm(KIT_OUT, { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  const built = spawnSync(process.execPath, [tsc, "-p", join(root, "tsconfig.kit.json")], {
    stdio: "inherit",
  });
  if (built.status !== 0) process.exit(built.status ?? 1);
  const leaks = await nodeImportsFrom(KIT_ENTRY);
  if (leaks.length > 0) {
    console.error(
      `the Worker-safe kit reaches Node modules (they belong in src/kit/node):\n${
        leaks.join("\n")
      }`,
    );
    process.exit(1);
  }
  for (const entry of [KIT_ENTRY, KIT_NODE_ENTRY]) await stat(entry);
  console.log(
    `${relative(root, KIT_OUT)}: ${((await size(KIT_OUT)) / 1024).toFixed(1)} KiB ` +
      "(JavaScript and .d.ts); the Worker entry reaches no Node module",
  );
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
