/**
 * Code that is large and optional is loaded by a dynamic import the first time it is needed, and
 * the Worker build ships it as an extra module beside the main module (docs/deploy.md).
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, posix } from "node:path";
import { pathToFileURL } from "node:url";
import { bundleWorker, type WorkerModule, writeWorker } from "../scripts/build-worker.ts";
import { remoteBuiltins } from "../src/builtins/remote-builtins.ts";
import { readSettings } from "../src/config/settings.ts";
import { ConfigError } from "../src/protocol/config-error.ts";

const TOKEN = `ghp_${"T0k3n".repeat(8)}`;

/** The built-ins' keys as a composition root parses them. */
const keysOf = (env: Record<string, string>) => readSettings(env).env.builtins;

describe("remote built-ins are loaded only when one of their keys is set", () => {
  it("with none of them set there are none, whatever else the environment holds", async () => {
    assert.deepEqual(
      await remoteBuiltins(keysOf({ TRACEFETCH_MAX_PROVIDERS: "4", HOME: "/x" })),
      {},
    );
    assert.deepEqual(await remoteBuiltins(keysOf({ GITHUB_TOKEN: " ", EXA_API_KEY: "" })), {});
  });

  it("GITHUB_TOKEN makes the github built-in", async () => {
    assert.deepEqual(Object.keys(await remoteBuiltins(keysOf({ GITHUB_TOKEN: TOKEN }))), [
      "github",
    ]);
  });

  it("a base URL override alone is still checked: a bad one stops the start naming it", () => {
    assert.throws(
      () => keysOf({ EXA_BASE_URL: "ftp://exa.example" }),
      (error: unknown) => error instanceof ConfigError && /^EXA_BASE_URL /.test(error.message),
    );
  });
});

/** What a module imports, statically or by a dynamic import: relative specifiers only. */
function importsOf(m: WorkerModule): string[] {
  const found = [...m.code.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*)"(\.{1,2}\/[^"]+)"/g)];
  return found.map((match) => posix.join(posix.dirname(m.path), match[1] as string));
}

describe("the Worker build", { timeout: 60_000 }, () => {
  let modules: WorkerModule[];

  before(async () => {
    modules = await bundleWorker({ withCorpus: false, name: "worker-test" });
  });

  it("puts the main module first, its chunks beside it, and every import names one of them", () => {
    assert.equal(modules[0]?.path, "worker-test.js");
    assert.equal(modules[0]?.loaded, "start");
    const paths = new Set(modules.map((m) => m.path));
    for (const m of modules.slice(1)) assert.match(m.path, /^worker-test\/[\w-]+\.js$/);
    for (const m of modules) {
      for (const target of importsOf(m)) {
        assert.ok(paths.has(target), `${m.path} imports ${target}`);
      }
    }
  });

  const LAZY = [
    "src/protocol/schema-documents.ts",
    "schemas/envelope.json",
    "src/gateway/action-run.ts",
    "src/protocol/action-request.ts",
    "src/gateway/caller-limits.ts",
    "src/core/search-log.ts",
    "src/builtins/mod.ts",
    "src/builtins/github.ts",
    "src/builtins/exa.ts",
    "src/http/forwarded-client.ts",
    "src/io/ip-rules.ts",
    "src/io/inflate-if-deflated.ts",
    "src/gateway/page-fetching.ts",
    "src/runtime/worker-evidence.ts",
    "src/http/api-docs-answers.ts",
    "src/http/page/page-answers.ts",
    "src/gateway/suspension-probe.ts",
  ];

  it("ships the schemas, expand and refresh, the remote built-ins, ipaddr.js and the other code a search does not need only as extra modules", () => {
    const atStart = modules.filter((m) => m.loaded === "start").flatMap((m) => m.inputs);
    const onDemand = modules.filter((m) => m.loaded === "on_demand").flatMap((m) => m.inputs);
    for (const file of LAZY) {
      assert.ok(!atStart.includes(file), `${file} is in the main module`);
      assert.ok(onDemand.includes(file), `${file} is in no extra module`);
    }
    assert.ok(!atStart.some((file) => file.endsWith("/ipaddr.js/lib/ipaddr.js")), "ipaddr.js");
    assert.ok(
      atStart.includes("src/http/search-input.ts"),
      "the search path is in the main module",
    );
  });
});

describe("writeWorker", () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "tracefetch-worker-build-"));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const build = (chunk: string): WorkerModule[] => [
    {
      path: "w.js",
      code: `import("./w/${chunk}");`,
      loaded: "start",
      source: "w.ts",
      inputs: [],
    },
    { path: `w/${chunk}`, code: "export {};", loaded: "on_demand", source: null, inputs: [] },
  ];

  it("writes the main module and its chunks, and removes the chunks of the build it replaces", async () => {
    const out = pathToFileURL(`${dir}/out/`);
    const staging = pathToFileURL(`${dir}/staging/`);
    await writeWorker(build("a-1.js"), out, staging);
    await writeWorker(build("b-2.js"), out, staging);
    assert.equal(await readFile(new URL("w.js", out), "utf8"), 'import("./w/b-2.js");');
    assert.deepEqual(await readdir(new URL("w/", out)), ["b-2.js"]);
    assert.ok(!(await readdir(dir)).includes("staging"), "the staging folder is gone");
  });

  it("leaves a file with the same text alone, so a watcher sees only what changed", async () => {
    const out = pathToFileURL(`${dir}/same/`);
    const staging = pathToFileURL(`${dir}/staging/`);
    await writeWorker(build("a-1.js"), out, staging);
    const inodes = async () =>
      (await Promise.all([stat(new URL("w.js", out)), stat(new URL("w/a-1.js", out))])).map((s) =>
        s.ino
      );
    const first = await inodes();
    await writeWorker(build("a-1.js"), out, staging);
    assert.deepEqual(await inodes(), first);
  });
});
