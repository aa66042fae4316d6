/**
 * What a newcomer meets when `npm start` (and `deno task dev`, `tracefetch serve`, `tracefetch
 * validate`) cannot do what was asked: one line per manifest problem, in words, with "did you
 * mean"; a missing manifest file named with the variable that named it; a port in use or a host
 * that does not resolve in one line saying what to set; a manifest with no providers warned about.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { manifestFileMissing } from "../src/config/mod.ts";
import { cleanEnv } from "./support/cli.ts";
import { keyPair } from "./support/auth-keys.ts";

const root = fileURLToPath(new URL("../", import.meta.url));

type Run = { code: number | null; stdout: string; stderr: string };

/**
 * Runs an entry with a clean environment plus `env`, to its exit, or until stdout says it listens
 * (then it is stopped with SIGTERM, and the output so far is the run's).
 */
function runEntry(command: string, args: string[], env: Record<string, string>): Promise<Run> {
  const child = spawn(command, args, {
    cwd: root,
    env: { ...cleanEnv(), NO_COLOR: "1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => {
    stdout += c.toString();
    if (stdout.includes("listening on")) child.kill("SIGTERM");
  });
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${command} did not exit: ${stdout}${stderr}`));
    }, 30_000);
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const ENTRIES: Array<[string, (env: Record<string, string>) => Promise<Run>]> = [
  // "node", not process.execPath: under `deno test` that is deno.
  ["npm start", (env) => runEntry("node", ["--import", "tsx", "src/runtime/node.ts"], env)],
  [
    "deno task dev",
    (env) =>
      runEntry("./node_modules/deno/deno", [
        "run",
        "--allow-net",
        "--allow-env",
        "--allow-read",
        "src/runtime/deno.ts",
      ], env),
  ],
];

/** A port some other program holds on 127.0.0.1 while `use` runs. */
async function withPortTaken<T>(use: (port: number) => Promise<T>): Promise<T> {
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
  try {
    return await use((holder.address() as AddressInfo).port);
  } finally {
    await new Promise<void>((resolve) => holder.close(() => resolve()));
  }
}

const BAD_MANIFEST = JSON.stringify({
  schema_version: "tracefetch.providers.v1",
  providers: [
    { name: "Papers", scope: "papers", endpoint: "https://papers.example/search", timeout: 3 },
    { name: "notes", scope: "notes", endpoint: "https://notes.example/s", sensitivty: "public" },
  ],
});

for (const [entry, start] of ENTRIES) {
  describe(`${entry}: a start that cannot go on says what to change, one line each, exit 2`, () => {
    it("a bad manifest: one line per problem, names in words, and did you mean for an unknown field", async () => {
      const run = await start({ TRACEFETCH_MANIFEST: BAD_MANIFEST, PORT: "0" });
      assert.equal(run.code, 2, run.stderr);
      assert.equal(run.stdout, "");
      assert.deepEqual(run.stderr.split("\n"), [
        "tracefetch: invalid manifest, 3 problems:",
        '  provider "Papers": providers.0.name: must be lowercase letters, digits, _ or -, starting with a letter, at most 64 characters; got "Papers"',
        '  provider "Papers": providers.0.timeout: is not a known field; did you mean "timeout_seconds"?',
        '  provider "notes": providers.1.sensitivty: is not a known field; did you mean "sensitivity"?',
        "",
      ]);
    });

    it("a missing manifest file names TRACEFETCH_MANIFEST and the path", async () => {
      const run = await start({ TRACEFETCH_MANIFEST: "no-such-manifest.json", PORT: "0" });
      assert.deepEqual([run.code, run.stdout], [2, ""]);
      assert.equal(
        run.stderr,
        `tracefetch: ${manifestFileMissing("no-such-manifest.json", "TRACEFETCH_MANIFEST")}\n`,
      );
      assert.match(run.stderr, /TRACEFETCH_MANIFEST/);
    });

    it("a port in use names the address and suggests PORT=", async () => {
      await withPortTaken(async (port) => {
        const run = await start({ PORT: String(port), HOST: "127.0.0.1" });
        assert.deepEqual([run.code, run.stdout], [2, ""]);
        assert.equal(
          run.stderr,
          `tracefetch: 127.0.0.1:${port} is already in use; set PORT= to another port (PORT=0 picks a free one)\n`,
        );
      });
    });

    it("HOST=nohost.invalid is one line naming HOST, not a stack trace", async () => {
      const run = await start({ HOST: "nohost.invalid", PORT: "0" });
      assert.deepEqual([run.code, run.stdout], [2, ""]);
      assert.match(
        run.stderr,
        /^tracefetch: HOST=nohost\.invalid does not resolve[^\n]*set HOST=[^\n]*\n$/,
      );
    });

    it("PORT=99999 is one line naming PORT", async () => {
      const run = await start({ PORT: "99999" });
      assert.deepEqual([run.code, run.stdout, run.stderr], [
        2,
        "",
        'tracefetch: PORT must be an integer from 0 to 65535, got "99999"\n',
      ]);
    });

    it("a trace sink set but not confirmed starts, saying so at start: mining is undecided", async () => {
      const signing = await keyPair("EdDSA", "gateway-1");
      const run = await start({
        PORT: "0",
        TRACEFETCH_TRACE_WEBHOOK: "https://collector.example/traces",
        TRACEFETCH_TRACE_RAW_QUERIES: "1",
        TRACEFETCH_SIGNING_JWK: JSON.stringify(signing.privateJwk),
        TRACEFETCH_GATEWAY_ISSUER: "https://gateway.example",
      });
      assert.match(run.stdout, /listening on http:\/\/127\.0\.0\.1:\d+/);
      assert.equal(
        run.stderr,
        "tracefetch: warning: TRACEFETCH_TRACE_WEBHOOK is set but TRACEFETCH_MINING_CONFIRMED is not: mining is undecided, and nothing is recorded until the operator sets TRACEFETCH_MINING_CONFIRMED=1\n",
      );
    });

    it("a manifest with no providers starts, with one warning line on stderr", async () => {
      const run = await start({
        TRACEFETCH_MANIFEST: '{"schema_version":"tracefetch.providers.v1","providers":[]}',
        PORT: "0",
      });
      assert.match(run.stdout, /listening on http:\/\/127\.0\.0\.1:\d+/);
      assert.equal(
        run.stderr,
        "tracefetch: warning: the manifest declares no providers: every search will answer no_providers_selected until it lists some (docs/protocol.md)\n",
      );
    });
  });
}

describe("one wording for a missing manifest file in npm start, tracefetch serve and tracefetch validate", () => {
  const cli = (args: string[]) => runEntry("node", ["bin/tracefetch.js", ...args], { PORT: "0" });

  it("serve and validate say what npm start says", async () => {
    const wording =
      /no manifest file at "no-such-manifest\.json" \(from [^;]+; a relative path is read from the working directory\)/;
    const serve = await cli(["serve", "--manifest", "no-such-manifest.json"]);
    assert.equal(serve.code, 2);
    assert.match(serve.stderr, wording);
    const validate = await cli(["validate", "no-such-manifest.json", "--json"]);
    assert.equal(validate.code, 2);
    assert.match(JSON.parse(validate.stdout).error.message, wording);
  });
});
