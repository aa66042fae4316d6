// The import check (.dependency-cruiser.mjs) over the real tree, and over small trees written to a
// temporary folder that show each rule fires: a check that cannot fail proves nothing.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { IConfiguration, ICruiseResult, IViolation } from "dependency-cruiser";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

interface Layer {
  name: string;
  folders: string[];
  siblingsImportEachOther?: boolean;
  onlyImports?: string[];
}

interface ConfigModule {
  default: IConfiguration;
  LAYERS: Layer[];
  CHECKED: string[];
  NODE_ALLOWED: string[];
}

async function loadConfig(): Promise<ConfigModule> {
  return await import(new URL("../.dependency-cruiser.mjs", import.meta.url).href);
}

async function check(
  baseDir: string,
): Promise<{ violations: IViolation[]; result: ICruiseResult }> {
  const { cruise } = await import("dependency-cruiser");
  const config = await loadConfig();
  const { forbidden = [] } = config.default;
  const reported = await cruise(config.CHECKED, {
    ...config.default.options,
    ruleSet: { forbidden },
    validate: true,
    baseDir,
  });
  assert.ok(typeof reported.output === "object", "the cruise returns a result object");
  return { violations: reported.output.summary.violations, result: reported.output };
}

function describeViolation(violation: IViolation): string {
  const cycle = violation.cycle
    ? ` (cycle: ${violation.cycle.map((step) => step.name).join(" -> ")})`
    : "";
  return `${violation.rule.name}: ${violation.from} -> ${violation.to}${cycle}`;
}

/** Writes files (path relative to the folder, text) and returns the folder. */
async function writeTree(folder: string, files: Record<string, string>): Promise<string> {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(folder, path)), { recursive: true });
    await writeFile(join(folder, path), text);
  }
  return folder;
}

/** A relative import specifier from one fixture file to another. */
function specifier(from: string, to: string): string {
  const up = from.split("/").slice(0, -1).map(() => "..");
  return [...up, to].join("/");
}

/** A fixture file one folder down in a layer folder, so under providers/ it is a provider's own. */
const fileIn = (folder: string, name = "m") => `${folder}/example/${name}.ts`;

/** Every checked folder exists in a fixture, so the cruise reads the same list as on the real tree. */
function emptyCheckedFolders(checked: string[]): Record<string, string> {
  return Object.fromEntries(
    checked.map((folder) => [`${folder}/keep.ts`, "export const keep = 1;\n"]),
  );
}

function pairs(violations: IViolation[]): string[] {
  return violations.map((violation) => `${violation.from} -> ${violation.to}`).sort();
}

describe("import check", () => {
  let scratch = "";
  let config: ConfigModule;
  let counter = 0;

  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), "tracefetch-imports-"));
    config = await loadConfig();
  });

  after(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  /** A fresh fixture tree with every checked folder present, plus the given files. */
  async function fixture(files: Record<string, string>): Promise<string> {
    counter += 1;
    return await writeTree(join(scratch, `tree-${counter}`), {
      ...emptyCheckedFolders(config.CHECKED),
      ...files,
    });
  }

  it("finds no cycle and no import of a higher layer in src/, providers/, scripts/, bin/ and bench/", async () => {
    const { violations, result } = await check(ROOT);
    assert.ok(result.summary.totalCruised > 100, "the check read the real tree");
    for (const folder of config.CHECKED) {
      assert.ok(
        result.modules.some((module) => module.source.startsWith(`${folder}/`)),
        `the check read ${folder}/`,
      );
    }
    assert.deepEqual(violations.map(describeViolation), []);
  });

  it("src/gateway imports 6 other src folders at most, and src/config, below it, none above", async () => {
    const { result } = await check(ROOT);
    const folderOf = (path: string) => /^src\/([^/]+)\//.exec(path)?.[1] ?? null;
    const importedBy = (folder: string) =>
      new Set(
        result.modules
          .filter((module) => folderOf(module.source) === folder)
          .flatMap((module) => module.dependencies.map((d) => folderOf(d.resolved)))
          .filter((to): to is string => to !== null && to !== folder),
      );
    const gateway = [...importedBy("gateway")].sort();
    assert.deepEqual(gateway, ["config", "core", "envelope", "protocol", "state", "transport"]);
    const config = importedBy("config");
    for (const above of ["gateway", "http", "runtime", "cli"]) {
      assert.ok(!config.has(above), `src/config imports src/${above}`);
    }
  });

  it("is run by npm run check over the same folders the tests check", async () => {
    const manifest = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8"));
    assert.equal(
      manifest.scripts?.["check:imports"],
      `depcruise --config .dependency-cruiser.mjs ${config.CHECKED.join(" ")}`,
    );
    assert.match(manifest.scripts?.check ?? "", /npm run check:imports/);
  });

  it("passes a tree whose every import points down the layer order, Node modules where allowed", async () => {
    const files: Record<string, string> = {};
    let imports = 0;
    config.LAYERS.forEach((layer, rank) => {
      const lower = config.LAYERS.slice(rank + 1).flatMap((below) => below.folders)
        .filter((folder) => !layer.onlyImports || layer.onlyImports.includes(folder));
      layer.folders.forEach((folder, index) => {
        // Folders of the composition-root rank may import the ones after them in the list.
        const siblings = layer.siblingsImportEachOther ? layer.folders.slice(index + 1) : [];
        const from = fileIn(folder);
        const lines = [...siblings, ...lower].map((target, n) =>
          n % 2 === 0
            ? `import type { Value as V${n} } from "${specifier(from, fileIn(target, "value"))}";`
            : `import { value as v${n} } from "${specifier(from, fileIn(target, "value"))}";`
        );
        imports += lines.length;
        files[from] = `${lines.join("\n")}\nexport const m = 1;\n`;
        files[fileIn(folder, "value")] = "export type Value = number;\nexport const value = 1;\n";
      });
    });
    for (const allowed of config.NODE_ALLOWED) {
      files[`${allowed}/reads-files.ts`] = 'import { readFile } from "node:fs/promises";\n' +
        "export const read = readFile;\n";
      imports += 1;
    }
    const { violations, result } = await check(await fixture(files));
    assert.deepEqual(violations.map(describeViolation), []);
    const followed = result.summary.totalDependenciesCruised ?? 0;
    assert.ok(followed >= imports, `the check followed all ${imports} imports (${followed})`);
  });

  it("reports every import that points to a higher layer, type-only ones included", async () => {
    const files: Record<string, string> = {};
    const expected: string[] = [];
    config.LAYERS.forEach((layer, rank) => {
      const higher = config.LAYERS.slice(0, rank).flatMap((above) => above.folders);
      for (const folder of layer.folders) {
        const from = fileIn(folder, "up");
        files[fileIn(folder, "target")] = "export type Target = number;\n";
        files[from] = higher.map((target, n) =>
          `import type { Target as T${n} } from "${specifier(from, fileIn(target, "target"))}";\n`
        ).join("") + "export const up = 1;\n";
        for (const target of higher) {
          expected.push(`${from} -> ${fileIn(target, "target")}`);
        }
      }
    });
    assert.ok(expected.length > 50, "the fixture holds an upward import for every pair of layers");
    const { violations } = await check(await fixture(files));
    const layerViolations = violations.filter((violation) =>
      violation.rule.name.startsWith("layer:")
    );
    assert.deepEqual([...new Set(pairs(layerViolations))], expected.sort());
    assert.deepEqual(
      violations.filter((violation) => !violation.rule.name.startsWith("layer:")),
      [],
    );
  });

  it("reports a cycle, also one made only of type imports", async () => {
    const { violations } = await check(
      await fixture({
        "src/core/example/a.ts": 'import { b } from "./b.ts";\nexport const a = b + 1;\n',
        "src/core/example/b.ts": 'import type { A } from "./c.ts";\nexport const b: A = 1;\n',
        "src/core/example/c.ts": 'import { a } from "./a.ts";\nexport type A = number;\n' +
          "export const c = a;\n",
        "src/protocol/example/d.ts": 'import type { E } from "./e.ts";\nexport type D = E[];\n',
        "src/protocol/example/e.ts": 'import type { D } from "./d.ts";\nexport type E = D | 1;\n',
        // The shape bench/ once had: a profile run, a scenario it borrows a constant from, and the
        // stage breakdown that scenario uses, which took its profile type from the profile run.
        "bench/profile.ts": 'import { CONCURRENCY } from "./scenario.ts";\n' +
          "export type Profile = number[];\nexport const run = CONCURRENCY;\n",
        "bench/scenario.ts": 'import { split } from "./stages.ts";\n' +
          "export const CONCURRENCY = 16;\nexport const scenario = split;\n",
        "bench/stages.ts": 'import type { Profile } from "./profile.ts";\n' +
          "export const split = (profile: Profile) => profile.length;\n",
      }),
    );
    const cycles = violations
      .filter((violation) => violation.rule.name === "no-circular")
      .map((violation) => [violation.from, ...(violation.cycle ?? []).map((step) => step.name)]);
    const found = (files: string[]) =>
      cycles.some((cycle) => files.every((file) => cycle.includes(file)));
    assert.ok(found(["a", "b", "c"].map((name) => `src/core/example/${name}.ts`)), "a -> b -> c");
    assert.ok(
      found(["d", "e"].map((name) => `src/protocol/example/${name}.ts`)),
      "d <-> e (types)",
    );
    assert.ok(
      found(["profile", "scenario", "stages"].map((name) => `bench/${name}.ts`)),
      "bench/profile -> scenario -> stages -> profile (through a type)",
    );
    assert.deepEqual(violations.filter((violation) => violation.rule.name !== "no-circular"), []);
  });

  it("reports folders of one rank that import each other (envelope and auth)", async () => {
    const { violations } = await check(
      await fixture({
        "src/envelope/example/m.ts": 'import { auth } from "../../auth/example/m.ts";\n' +
          "export const envelope = auth;\n",
        "src/auth/example/m.ts": "export const auth = 1;\n",
      }),
    );
    assert.deepEqual(violations.map(describeViolation), [
      "layer:envelope-imports-no-sibling: src/envelope/example/m.ts -> src/auth/example/m.ts",
    ]);
  });

  it("keeps the gateway and the evidence fetch, which share a rank, apart both ways", async () => {
    const { violations } = await check(
      await fixture({
        "src/gateway/m.ts": 'import { evidence } from "../evidence/m.ts";\n' +
          "export const gateway = evidence;\n",
        "src/evidence/m.ts": "export const evidence = 1;\n",
        "src/evidence/n.ts": 'import { other } from "../gateway/n.ts";\n' +
          "export const fetched = other;\n",
        "src/gateway/n.ts": "export const other = 1;\n",
      }),
    );
    assert.deepEqual(violations.map(describeViolation).sort(), [
      "layer:evidence-imports-no-sibling: src/evidence/n.ts -> src/gateway/n.ts",
      "layer:gateway-imports-no-sibling: src/gateway/m.ts -> src/evidence/m.ts",
    ]);
  });

  it("reports an example provider that imports past the kit, the protocol and src/core/terms, or another provider", async () => {
    const { violations } = await check(
      await fixture({
        "providers/alpha/adapter.ts": 'import { kit } from "../../src/kit/m.ts";\n' +
          'import { limit } from "../../src/protocol/m.ts";\n' +
          'import { terms } from "../../src/core/terms/m.ts";\n' +
          'import { core } from "../../src/core/m.ts";\n' +
          'import { transport } from "../../src/transport/m.ts";\n' +
          'import { beta } from "../beta/m.ts";\n' +
          'import { shared } from "../shared/m.ts";\n' +
          "export const adapter = [kit, limit, terms, core, transport, beta, shared];\n",
        "providers/beta/m.ts": "export const beta = 1;\n",
        "providers/shared/m.ts": "export const shared = 1;\n",
        "src/kit/m.ts": "export const kit = 1;\n",
        "src/protocol/m.ts": "export const limit = 1;\n",
        "src/core/terms/m.ts": "export const terms = 1;\n",
        "src/core/m.ts": "export const core = 1;\n",
        "src/transport/m.ts": "export const transport = 1;\n",
      }),
    );
    assert.deepEqual(violations.map(describeViolation).sort(), [
      "layer:example-providers-imports-only-kit-and-protocol-and-core-terms: providers/alpha/adapter.ts -> src/core/m.ts",
      "layer:example-providers-imports-only-kit-and-protocol-and-core-terms: providers/alpha/adapter.ts -> src/transport/m.ts",
      "providers:each-stays-in-its-folder: providers/alpha/adapter.ts -> providers/beta/m.ts",
    ]);
  });

  it("reports src/ code below the composition roots that imports providers/", async () => {
    const { violations } = await check(
      await fixture({
        "src/gateway/m.ts": 'import { corpus } from "../../providers/corpus/m.ts";\n' +
          "export const gateway = corpus;\n",
        "src/runtime/m.ts": 'import { corpus } from "../../providers/corpus/m.ts";\n' +
          "export const runtime = corpus;\n",
        "providers/corpus/m.ts": "export const corpus = 1;\n",
      }),
    );
    assert.deepEqual(violations.map(describeViolation), [
      "layer:gateway-and-evidence-imports-no-higher-layer: src/gateway/m.ts -> providers/corpus/m.ts",
    ]);
  });

  it("lets bench/ import src/, providers/ and the other composition roots, and nothing below import bench/", async () => {
    assert.ok(config.LAYERS[0]?.folders.includes("bench"), "bench/ is a composition root");
    const { violations } = await check(
      await fixture({
        "bench/run.ts": 'import { http } from "../src/http/m.ts";\n' +
          'import { corpus } from "../providers/corpus/m.ts";\n' +
          'import { script } from "../scripts/m.ts";\n' +
          'import { readFile } from "node:fs/promises";\n' +
          "export const run = [http, corpus, script, readFile];\n",
        "bench/target.ts": "export const target = 1;\n",
        "src/http/m.ts": "export const http = 1;\n",
        "providers/corpus/m.ts": "export const corpus = 1;\n",
        "scripts/m.ts": "export const script = 1;\n",
        "src/gateway/m.ts": 'import type { target } from "../../bench/target.ts";\n' +
          "export const gateway: typeof target = 1;\n",
        "providers/corpus/up.ts": 'import { target } from "../../bench/target.ts";\n' +
          "export const up = target;\n",
      }),
    );
    assert.deepEqual(violations.map(describeViolation).sort(), [
      "layer:example-providers-imports-no-higher-layer: providers/corpus/up.ts -> bench/target.ts",
      "layer:gateway-and-evidence-imports-no-higher-layer: src/gateway/m.ts -> bench/target.ts",
    ]);
  });

  it("reports a Node module imported outside the runtime, the CLI and the kit's Node part", async () => {
    const { violations } = await check(
      await fixture({
        "src/core/m.ts":
          'import { readFile } from "node:fs/promises";\nexport const core = readFile;\n',
        "src/gateway/m.ts": 'import { join } from "path";\nexport const gateway = join;\n',
        "src/kit/m.ts": 'import { serve } from "./node/serve.ts";\nexport const kit = serve;\n',
        "src/kit/node/serve.ts": 'import { createServer } from "node:http";\n' +
          "export const serve = createServer;\n",
        "src/runtime/m.ts": 'import { argv } from "node:process";\nexport const runtime = argv;\n',
        "src/cli/m.ts": 'import { stdout } from "node:process";\nexport const cli = stdout;\n',
      }),
    );
    assert.deepEqual(violations.map(describeViolation).sort(), [
      // dependency-cruiser names a Node builtin without its `node:` prefix.
      "node-only:builtins: src/core/m.ts -> fs/promises",
      "node-only:builtins: src/gateway/m.ts -> path",
      "node-only:kit-node-part: src/kit/m.ts -> src/kit/node/serve.ts",
    ]);
  });

  it("reports a src/ folder that has no place in the layer order", async () => {
    const { violations } = await check(
      await fixture({
        "src/extra/m.ts":
          'import { limit } from "../protocol/m.ts";\nexport const extra = limit;\n',
        "src/core/m.ts": 'import { extra } from "../extra/m.ts";\nexport const core = extra;\n',
        "src/protocol/m.ts": "export const limit = 1;\n",
      }),
    );
    assert.deepEqual(violations.map(describeViolation).sort(), [
      "layer:every-src-folder-has-a-layer: src/extra/m.ts -> src/protocol/m.ts",
      "layer:imports-only-layered-src: src/core/m.ts -> src/extra/m.ts",
    ]);
  });

  it("reports a search engine's parts imported outside the built-ins, the example providers and src/core/terms", async () => {
    const engine = {
      "node_modules/stemmer/package.json": JSON.stringify({
        name: "stemmer",
        type: "module",
        exports: { ".": { import: "./index.js" } },
      }),
      "node_modules/stemmer/index.js": "export function stemmer(word) { return word; }\n",
    };
    const source = 'import { stemmer } from "stemmer";\nexport const stem = stemmer;\n';
    const { violations } = await check(
      await fixture({
        ...engine,
        "src/transport/m.ts": source,
        "src/core/m.ts": source,
        "src/core/terms/m.ts": source,
        "src/builtins/m.ts": source,
        "providers/corpus/m.ts": source,
      }),
    );
    assert.deepEqual(violations.map(describeViolation).sort(), [
      "engine:only-in-builtins-and-providers: src/core/m.ts -> node_modules/stemmer/index.js",
      "engine:only-in-builtins-and-providers: src/transport/m.ts -> node_modules/stemmer/index.js",
    ]);
  });

  it("reports ioredis imported anywhere but its adapter, and the worker reaching that adapter", async () => {
    const { violations } = await check(
      await fixture({
        "node_modules/ioredis/package.json": JSON.stringify({
          name: "ioredis",
          type: "module",
          exports: { ".": { import: "./index.js" } },
        }),
        "node_modules/ioredis/index.js": "export class Redis {}\n",
        "src/state/redis-connection.ts":
          'import { Redis } from "ioredis";\nexport const R = Redis;\n',
        "src/core/m.ts": 'import { Redis } from "ioredis";\nexport const R = Redis;\n',
        "src/runtime/worker.ts": 'export { R } from "../state/redis-connection.ts";\n',
      }),
    );
    assert.deepEqual(violations.map(describeViolation).sort(), [
      "sockets:ioredis-only-in-its-adapter: src/core/m.ts -> node_modules/ioredis/index.js",
      "sockets:worker-never-reaches-a-socket-adapter: src/runtime/worker.ts -> src/state/redis-connection.ts",
    ]);
  });

  it("reports an import it cannot resolve, since no other rule could see where it points", async () => {
    const { violations } = await check(
      await fixture({
        "src/core/m.ts": 'import { gone } from "../http/gone.ts";\nexport const core = gone;\n',
      }),
    );
    assert.deepEqual(violations.map(describeViolation), [
      "not-to-unresolvable: src/core/m.ts -> ../http/gone.ts",
    ]);
  });
});
