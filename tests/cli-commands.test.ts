/**
 * The offline commands (`validate`, `schema`), the in-process search (`search --manifest`), and
 * `serve`, run through the real bin.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createGateway } from "../src/http/mod.ts";
import { listen } from "../src/runtime/node-listen.ts";
import { manifestOf, settingsFor } from "./support/gateway.ts";
import { answer, startServer, type TestServer } from "./support/servers.ts";
import { cleanEnv, runCli, runJson, tempConfig } from "./support/cli.ts";

const LOOPBACK = { TRACEFETCH_ALLOW_LOOPBACK: "1" };

describe("tracefetch validate, schema and search --manifest", { concurrency: true }, () => {
  let folder: Awaited<ReturnType<typeof tempConfig>>;
  let provider: TestServer;
  const file = (name: string) => join(folder.dir, name);

  before(async () => {
    folder = await tempConfig();
    provider = await startServer(
      answer("alpha", "alpha", [{ title: "Deadline notes", locator: "https://alpha.example/1" }]),
    );
    const good = manifestOf([
      { name: "workspace", scope: "local" },
      { name: "alpha", endpoint: provider.url },
      { name: "vault", endpoint: provider.url, sensitivity: "account-visible" },
    ]);
    await writeFile(file("good.json"), JSON.stringify(good));
    const bad = manifestOf([
      { name: "alpha", endpoint: "ftp://alpha.example" },
      { name: "alpha", endpoint: "https://alpha.example", colour: "red" },
    ]);
    await writeFile(file("bad.json"), JSON.stringify(bad));
  });
  after(async () => {
    await provider.close();
    await folder.remove();
  });

  it("validate: a good manifest is ok, exit 0, with its provider count", async () => {
    const run = await runJson(["validate", file("good.json")], { env: LOOPBACK });
    assert.equal(run.envelope.code, "ok");
    assert.equal(run.envelope.command, "validate");
    assert.deepEqual(run.envelope.result, {
      manifest: file("good.json"),
      valid: true,
      providers: 3,
      issues: [],
    });
  });

  it("validate: a bad manifest is exit 2, fix_input, with every issue", async () => {
    const run = await runJson(["validate", file("bad.json")], { env: LOOPBACK });
    assert.equal(run.code, 2);
    assert.equal(run.envelope.code, "invalid_field");
    assert.equal(run.envelope.action, "fix_input");
    assert.equal(run.envelope.result.valid, false);
    const fields = run.envelope.result.issues.map((i: { field: string }) => i.field);
    assert.ok(fields.includes("providers.1.colour"), JSON.stringify(fields));
    const human = await runCli(["validate", file("bad.json")], { env: LOOPBACK });
    assert.equal(human.code, 2);
    assert.match(
      human.stdout,
      /problem\(s\)\n {2}provider "alpha": providers\.1\.colour: is not a known field/,
    );
    assert.match(human.stderr, /\(invalid_field; next: fix_input\)/);
  });

  it("validate: http: loopback endpoints pass only with TRACEFETCH_ALLOW_LOOPBACK=1", async () => {
    const run = await runJson(["validate", file("good.json")]);
    assert.equal(run.code, 2);
    assert.match(run.envelope.error.message, /TRACEFETCH_ALLOW_LOOPBACK/);
  });

  it("validate: a missing file is not_found; a file that is not JSON is invalid_json", async () => {
    const missing = await runJson(["validate", file("missing.json")]);
    assert.equal(missing.envelope.code, "not_found");
    await writeFile(file("text.json"), "providers: none");
    const text = await runJson(["validate", file("text.json")]);
    assert.equal(text.envelope.code, "invalid_json");
  });

  it("schema envelope prints the raw schema, byte for byte", async () => {
    const run = await runCli(["schema", "envelope"]);
    assert.equal(run.code, 0);
    const want = readFileSync(new URL("../schemas/envelope.json", import.meta.url), "utf8");
    assert.equal(run.stdout, want);
    const missing = await runJson(["schema", "nope"]);
    assert.equal(missing.envelope.code, "not_found");
    assert.equal(missing.envelope.command, "schema");
  });

  it("search --manifest runs the core in process: the workspace built-in and a remote provider", async () => {
    const run = await runJson(["search", "deadline", "--manifest", file("good.json")], {
      env: LOOPBACK,
    });
    assert.equal(run.envelope.code, "ok");
    assert.deepEqual(run.envelope.result.decision.providers, ["workspace", "alpha"]);
    const foundBy = run.envelope.result.merged.flatMap((m: { found_by: string[] }) => m.found_by);
    assert.ok(foundBy.includes("workspace") && foundBy.includes("alpha"), JSON.stringify(foundBy));
    const human = await runCli(["search", "deadline", "--manifest", file("good.json")], {
      env: LOOPBACK,
    });
    assert.equal(human.code, 0);
    assert.match(human.stdout, /^ {2}workspace +success/m);
  });

  it("search --manifest: sensitive providers are visible only with --allow-sensitive", async () => {
    const args = ["search", "deadline", "--manifest", file("good.json"), "--provider", "vault"];
    const hidden = await runJson(args, { env: LOOPBACK });
    assert.equal(hidden.code, 3);
    assert.equal(hidden.envelope.code, "unauthorized");
    assert.equal(hidden.envelope.action, "login");
    // Visible now; without a signing key its gateway token cannot be minted, so it is skipped.
    const shown = await runJson([...args, "--allow-sensitive"], { env: LOOPBACK });
    assert.deepEqual(shown.envelope.result.decision.skipped, [
      { provider: "vault", reason: "not_configured" },
    ]);
  });

  it("search --manifest with a bad manifest is a usage error naming the problem", async () => {
    const run = await runJson(["search", "deadline", "--manifest", file("bad.json")], {
      env: LOOPBACK,
    });
    assert.equal(run.code, 2);
    assert.equal(run.envelope.error.field, "manifest");
    assert.match(run.envelope.error.message, /providers\.1\.colour: is not a known field/);
  });

  it("search --manifest parses the gateway's settings: a refused variable is named, exit 2", async () => {
    const run = await runJson(["search", "deadline", "--manifest", file("good.json")], {
      env: { ...LOOPBACK, TRACEFETCH_MAX_INFLIGHT: "many" },
    });
    assert.equal(run.code, 2);
    assert.equal(run.envelope.code, "invalid_field");
    assert.match(run.envelope.error.message, /^TRACEFETCH_MAX_INFLIGHT must be a positive integer/);
  });

  it("status only calls a gateway: a variable only a gateway reads never fails it", async () => {
    const app = createGateway(
      settingsFor(manifestOf([{ name: "alpha", endpoint: provider.url }]), {}, {
        allowLoopback: true,
      }),
    );
    const served = await listen(app.fetch);
    try {
      const run = await runJson(["status", "--gateway", `http://127.0.0.1:${served.port}`], {
        env: { TRACEFETCH_MAX_INFLIGHT: "many", TRACEFETCH_REQUIRE_AUTH: "maybe" },
      });
      assert.equal(run.code, 0);
      assert.equal(run.envelope.code, "ok");
    } finally {
      await served.close();
    }
  });

  it("an unknown command is exit 2, not_found, command unknown", async () => {
    const run = await runJson(["serach", "deadline"]);
    assert.equal(run.envelope.code, "not_found");
    assert.equal(run.envelope.command, "unknown");
  });

  it("serve runs the gateway until Ctrl-C", async () => {
    const bin = fileURLToPath(new URL("../bin/tracefetch.js", import.meta.url));
    const child = spawn("node", [bin, "serve", "--port", "0"], {
      env: cleanEnv(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    const listening = await new Promise<string>((resolve, reject) => {
      child.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString("utf8");
        const match = /listening on (http:\/\/\S+)/.exec(out);
        if (match) resolve(match[1] as string);
      });
      child.once("exit", (code) => reject(new Error(`serve exited ${code} before listening`)));
    });
    const status = await runJson(["status", "--gateway", listening]);
    assert.equal(status.envelope.code, "ok");
    assert.equal(status.envelope.result.service, "tracefetch-edge");
    const exited = new Promise<number | null>((resolve) =>
      child.once("exit", (code) => resolve(code))
    );
    child.kill("SIGINT");
    const code = await exited;
    // Deno's child_process reports the signal kill() sent rather than the child's own exit code.
    if (!("Deno" in globalThis)) assert.equal(code, 0);
    const gone = await runJson(["status", "--gateway", listening]);
    assert.equal(gone.envelope.code, "transport_error", "the gateway closed");
  });
});
