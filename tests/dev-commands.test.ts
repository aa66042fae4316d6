/**
 * The development commands as the README gives them: `npm run dev:deno` runs the project's own Deno
 * (no Deno installed) and stops on a SIGINT sent to npm alone; `npm run provider:corpus` stops on a
 * SIGTERM sent to npm alone; `npm run dev:worker` honours
 * TRACEFETCH_MANIFEST and the other TRACEFETCH_* variables, builds once per start, and a SIGTERM to
 * its process alone stops wrangler and workerd and frees the port. The commands that start a
 * server run on Node only: they spawn npm and wrangler, which `deno test` has no reason to repeat.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { type AddressInfo, connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { planWorker, WORKERS_VAR_MAX_BYTES } from "../scripts/dev-worker.ts";
import { ConfigError } from "../src/protocol/config-error.ts";
import { answer, startServer, type TestServer } from "./support/servers.ts";
import { cleanEnv } from "./support/cli.ts";

const root = fileURLToPath(new URL("../", import.meta.url));
const onDeno = "Deno" in globalThis;
/** A stopped command must have let go of its port by then. */
const STOP_WITHIN_MS = 10_000;

function manifestOf(endpoint: string) {
  return {
    schema_version: "tracefetch.providers.v1",
    providers: [{
      name: "mine",
      scope: "notes",
      source_class: "note-candidate",
      endpoint,
      timeout_seconds: 5,
    }],
  };
}

/** Output of a spawned command, and a wait for a pattern in it. */
function watchOutput(child: ChildProcess) {
  let text = "";
  const waiters: Array<() => void> = [];
  const onData = (chunk: Buffer) => {
    text += chunk.toString();
    for (const wake of waiters.splice(0)) wake();
  };
  child.stdout?.on("data", onData);
  child.stderr?.on("data", onData);
  child.once("exit", () => {
    for (const wake of waiters.splice(0)) wake();
  });
  return {
    text: () => text,
    waitFor(pattern: RegExp, withinMs: number): Promise<RegExpExecArray> {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no ${pattern} within ${withinMs} ms:\n${text}`)),
          withinMs,
        );
        const check = () => {
          const match = pattern.exec(text);
          if (match) {
            clearTimeout(timer);
            resolve(match);
          } else if (child.exitCode !== null || child.signalCode !== null) {
            clearTimeout(timer);
            reject(new Error(`exited before ${pattern}:\n${text}`));
          } else waiters.push(check);
        };
        check();
      });
    },
  };
}

function exited(child: ChildProcess, withinMs: number): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`still running after ${withinMs} ms`)),
      withinMs,
    );
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

/** Whether nothing listens on 127.0.0.1:port any more. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", () => resolve(true));
  });
}

/** Every process started by `pid`, its children's children included, with its command line. */
async function descendants(pid: number): Promise<Array<{ pid: number; args: string }>> {
  const { stdout } = await promisify(execFile)("ps", ["-eo", "pid=,ppid=,args="]);
  const rows = stdout.split("\n").map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), args: m[3] as string }));
  const found: Array<{ pid: number; args: string }> = [];
  const parents = new Set([pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const row of rows) {
      if (parents.has(row.ppid) && !parents.has(row.pid)) {
        parents.add(row.pid);
        found.push({ pid: row.pid, args: row.args });
        grew = true;
      }
    }
  }
  return found;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Kills a detached child's whole process group, whatever state a failed test left it in. */
function killGroup(child: ChildProcess | undefined): void {
  if (child?.pid === undefined) return;
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

describe("npm run dev:deno: Deno from node_modules, no Deno installed", { skip: onDeno }, () => {
  let child: ChildProcess | undefined;
  after(() => killGroup(child));

  it("answers /v1/status, then exits 0 and frees the port on a SIGINT sent to npm alone", async () => {
    // PATH without any Deno of the machine's: npm puts node_modules/.bin first for its scripts.
    const path = (process.env.PATH ?? "").split(":").filter((dir) => !/deno/i.test(dir)).join(":");
    child = spawn("npm", ["run", "dev:deno"], {
      cwd: root,
      detached: true,
      env: { ...cleanEnv(), PATH: path, PORT: "0", NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const output = watchOutput(child);
    const [, url, port] = await output.waitFor(
      /listening on (http:\/\/127\.0\.0\.1:(\d+))/,
      30_000,
    );
    const status = await fetch(`${url}/v1/status`);
    assert.equal(status.status, 200);
    assert.equal((await status.json()).code, "ok");

    process.kill(child.pid as number, "SIGINT");
    assert.equal(await exited(child, STOP_WITHIN_MS), 0, output.text());
    assert.ok(await refused(Number(port)), `${url} still answers after npm exited`);
  });
});

describe("npm run provider:corpus", { skip: onDeno }, () => {
  let child: ChildProcess | undefined;
  after(() => killGroup(child));

  it("serves, then a SIGTERM sent to npm alone stops the provider and frees its port", async () => {
    child = spawn("npm", [
      "run",
      "provider:corpus",
      "--",
      "--dir",
      "providers/corpus/data/engineering",
      "--name",
      "notes",
      "--scope",
      "notes",
    ], {
      cwd: root,
      detached: true,
      env: { ...cleanEnv(), NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const output = watchOutput(child);
    const [, url, port] = await output.waitFor(
      /at (http:\/\/127\.0\.0\.1:(\d+))\/search/,
      30_000,
    );
    const health = await fetch(`${url}/search`, { method: "GET" });
    await health.body?.cancel();
    process.kill(child.pid as number, "SIGTERM");
    await exited(child, STOP_WITHIN_MS);
    assert.ok(await refused(Number(port)), `${url} still answers after npm exited`);
  });
});

describe("npm run dev:worker under wrangler", { skip: onDeno, timeout: 60_000 }, () => {
  let provider: TestServer;
  let folder: string;
  let child: ChildProcess | undefined;
  let output: ReturnType<typeof watchOutput>;
  let url = "";
  let port = 0;
  /** What the script started, seen while it ran: wrangler, workerd, esbuild. */
  let started: Array<{ pid: number; args: string }> = [];

  before(async () => {
    provider = await startServer(answer("mine", "notes", []));
    folder = await mkdtemp(join(tmpdir(), "tracefetch-dev-worker-"));
    const manifest = join(folder, "manifest.json");
    await writeFile(manifest, JSON.stringify(manifestOf(provider.url), null, 2));
    child = spawn("node", ["--import", "tsx", "scripts/dev-worker.ts"], {
      cwd: root,
      // Its own group, so that whatever a failed test leaves behind can be killed as a whole.
      detached: true,
      env: {
        ...cleanEnv(),
        NO_COLOR: "1",
        PORT: "0",
        TRACEFETCH_MANIFEST: manifest,
        TRACEFETCH_ALLOW_LOOPBACK: "1",
        TRACEFETCH_REQUIRE_AUTH: "on",
        TRACEFETCH_AUTH_SECRET: "a development secret of at least thirty-two bytes",
        TRACEFETCH_AUTH_ISSUER: "https://issuer.test",
        TRACEFETCH_AUTH_AUDIENCE: "tracefetch",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    output = watchOutput(child);
    const ready = await output.waitFor(/Ready on (http:\/\/127\.0\.0\.1:(\d+))/, 50_000);
    url = ready[1] as string;
    port = Number(ready[2]);
    started = await descendants(child.pid as number);
  });

  after(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      await exited(child, STOP_WITHIN_MS).catch(() => {});
    }
    killGroup(child);
    // A wrangler or workerd the script failed to stop would hold the port for later runs.
    for (const { pid } of started) if (alive(pid)) process.kill(pid, "SIGKILL");
    await provider?.close();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it("serves the manifest TRACEFETCH_MANIFEST names, without the example providers", async () => {
    const status = await (await fetch(`${url}/v1/status`)).json();
    assert.equal(status.code, "ok", JSON.stringify(status));
    // The manifest lists only "mine": the example providers and the workspace are not added.
    assert.deepEqual(status.result.providers.map((p: { name: string }) => p.name), ["mine"]);
  });

  it("passes the other TRACEFETCH_ variables: TRACEFETCH_REQUIRE_AUTH refuses a search with no token", async () => {
    const res = await fetch(`${url}/v1/search?q=deadline`);
    assert.equal(res.status, 401, (await res.text()).slice(0, 300));
  });

  it("builds the worker once per start, not again in wrangler", () => {
    const text = output.text();
    assert.equal(text.match(/dev:worker: built /g)?.length, 1, text);
    assert.doesNotMatch(text, /\[custom build\]|restarting build/, text);
  });

  it("a SIGTERM to the script alone stops wrangler and workerd and frees the port", async () => {
    const workerd = started.filter(({ args }) => /\bworkerd serve\b/.test(args));
    assert.ok(
      workerd.length > 0,
      `no workerd among what the script started: ${JSON.stringify(started)}`,
    );
    const t0 = Date.now();
    process.kill(child?.pid as number, "SIGTERM");
    await exited(child as ChildProcess, STOP_WITHIN_MS);
    assert.ok(await refused(port), `127.0.0.1:${port} still accepts connections`);
    // A helper told to stop (esbuild's service) may take a moment more to be gone.
    let left = started.filter(({ pid }) => alive(pid));
    while (left.length > 0 && Date.now() - t0 < STOP_WITHIN_MS) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      left = left.filter(({ pid }) => alive(pid));
    }
    assert.deepEqual(left, [], "processes the script started outlived it");
  });
});

describe("dev:worker reads the environment as npm start does", () => {
  let folder: string;
  before(async () => {
    folder = await mkdtemp(join(tmpdir(), "tracefetch-dev-plan-"));
  });
  after(() => rm(folder, { recursive: true, force: true }));

  it("a manifest path reaches the worker as one line of JSON, and no example provider starts", async () => {
    const file = join(folder, "manifest.json");
    const manifest = manifestOf("http://127.0.0.1:9/search");
    await writeFile(file, JSON.stringify(manifest, null, 2));
    const plan = await planWorker({ TRACEFETCH_MANIFEST: file });
    assert.equal(plan.vars.TRACEFETCH_MANIFEST, JSON.stringify(manifest));
    assert.equal(plan.embeddedDefault, false);
    assert.equal(plan.bundledManifest, null);
  });

  it("inline JSON reaches the worker as given", async () => {
    const text = JSON.stringify(manifestOf("https://search.example/v1"));
    const plan = await planWorker({ TRACEFETCH_MANIFEST: text });
    assert.equal(plan.vars.TRACEFETCH_MANIFEST, text);
    assert.equal(plan.embeddedDefault, false);
  });

  it("without a manifest, the example providers start and may use loopback", async () => {
    const plan = await planWorker({ TRACEFETCH_ALLOW_LOOPBACK: "0" });
    assert.equal(plan.embeddedDefault, true);
    assert.equal(plan.vars.TRACEFETCH_MANIFEST, undefined);
    assert.equal(plan.vars.TRACEFETCH_ALLOW_LOOPBACK, "1");
  });

  it("your own manifest may use loopback only when TRACEFETCH_ALLOW_LOOPBACK says so, as with npm start", async () => {
    const text = JSON.stringify(manifestOf("http://127.0.0.1:9/search"));
    assert.equal(
      (await planWorker({ TRACEFETCH_MANIFEST: text })).vars.TRACEFETCH_ALLOW_LOOPBACK,
      "0",
    );
    assert.equal(
      (await planWorker({ TRACEFETCH_MANIFEST: text, TRACEFETCH_ALLOW_LOOPBACK: "yes" })).vars
        .TRACEFETCH_ALLOW_LOOPBACK,
      "yes",
    );
  });

  it("the other TRACEFETCH_ variables pass as vars; the CLI's token and tooling variables do not", async () => {
    const plan = await planWorker({
      TRACEFETCH_MAX_PROVIDERS: "4",
      TRACEFETCH_AUTH_SECRET: "s".repeat(32),
      TRACEFETCH_AUTH_ISSUER: "https://issuer.test",
      TRACEFETCH_TOKEN: "caller-token",
      TRACEFETCH_DEV_ISSUER_JWK: "{}",
      TRACEFETCH_MAX_INFLIGHT: "",
      HOME: "/home/someone",
    });
    assert.deepEqual(plan.vars, {
      TRACEFETCH_MAX_PROVIDERS: "4",
      TRACEFETCH_AUTH_SECRET: "s".repeat(32),
      TRACEFETCH_AUTH_ISSUER: "https://issuer.test",
      TRACEFETCH_ALLOW_LOOPBACK: "1",
    });
  });

  it("a manifest over the Workers var limit is bundled into the build, and the note says how to deploy it", async () => {
    const one = manifestOf("https://search.example/v1").providers[0];
    const count = Math.ceil(WORKERS_VAR_MAX_BYTES / JSON.stringify(one).length) + 1;
    const big = {
      schema_version: "tracefetch.providers.v1",
      providers: Array.from({ length: count }, (_, i) => ({ ...one, name: `p${i}` })),
    };
    const plan = await planWorker({ TRACEFETCH_MANIFEST: JSON.stringify(big) });
    assert.equal(plan.vars.TRACEFETCH_MANIFEST, undefined);
    assert.equal(plan.bundledManifest, JSON.stringify(big));
    assert.equal(plan.embeddedDefault, false);
    assert.match(plan.notes.join("\n"), /over the 5000 .*TRACEFETCH_MANIFEST_FILE=/);
  });

  it("a manifest file that is not there stops the start naming TRACEFETCH_MANIFEST", async () => {
    await assert.rejects(
      planWorker({ TRACEFETCH_MANIFEST: join(folder, "missing.json") }),
      (error: unknown) =>
        error instanceof ConfigError && /TRACEFETCH_MANIFEST/.test(error.message) &&
        /missing\.json/.test(error.message),
    );
  });

  it("a value npm start would refuse stops the start naming the variable", async () => {
    await assert.rejects(
      planWorker({ PORT: "99999" }),
      (error: unknown) => error instanceof ConfigError && /^PORT /.test(error.message),
    );
  });
});

describe("dev:worker refuses before anything starts, in npm start's words", () => {
  it("a PORT in use: one line naming the address and PORT=, exit 2, nothing built", async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    const port = (holder.address() as AddressInfo).port;
    try {
      // "node", not process.execPath: under `deno test` that is deno.
      const child = spawn("node", ["--import", "tsx", "scripts/dev-worker.ts"], {
        cwd: root,
        env: { ...cleanEnv(), NO_COLOR: "1", PORT: String(port) },
        stdio: ["ignore", "pipe", "pipe"],
      });
      const output = watchOutput(child);
      assert.equal(await exited(child, 30_000), 2, output.text());
      assert.equal(
        output.text(),
        `tracefetch: 127.0.0.1:${port} is already in use; set PORT= to another port (PORT=0 picks a free one)\n`,
      );
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });
});
