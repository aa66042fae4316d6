/**
 * What a newcomer meets first: one conformance entry point (`npm run conformance` is
 * `tracefetch conformance`), global options before the command, an unreachable gateway that says
 * what to start, a declined question that is not a success, human output that never points at JSON
 * fields, `dev:token --help`, and docs that say where each form of the CLI works.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { connectCommand } from "../src/cli/connect-command.ts";
import type { CliContext } from "../src/cli/cli-context.ts";
import { NO_PAINT } from "../src/cli/paint.ts";
import { createGateway } from "../src/http/mod.ts";
import { listen, type Listening } from "../src/runtime/node-listen.ts";
import { assertEnvelope, manifestOf, settingsFor } from "./support/gateway.ts";
import { cleanEnv, type CliRun, runCli, runJson, tempConfig } from "./support/cli.ts";
import { answer, raw, startServer, type TestServer } from "./support/servers.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const LOOPBACK = { TRACEFETCH_ALLOW_LOOPBACK: "1" };

/** Runs a command in the repository (npm, or node on a script), as a person would type it. */
function runIn(command: string, args: string[]): Promise<CliRun> {
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...cleanEnv(), NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on("data", (c: Buffer) => out.push(c));
  child.stderr.on("data", (c: Buffer) => err.push(c));
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) =>
      resolve({
        code,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
      }));
  });
}

/** Machine-mode stdout: exactly one envelope on one line, and the exit code is its exit_code. */
function oneEnvelope(run: CliRun) {
  const lines = run.stdout.split("\n");
  assert.equal(lines.length, 2, `one line on stdout:\n${run.stdout}\n${run.stderr}`);
  const envelope = assertEnvelope(JSON.parse(lines[0] as string));
  assert.equal(run.code, envelope.exit_code);
  return envelope;
}

/**
 * A provider that follows docs/protocol.md: up to `limit` candidates, none for a token that
 * matches nothing, 400 for a malformed request, 501 for an unknown action.
 */
function notesProvider() {
  return startServer((_req, res, body) => {
    const refuse = (status: number, code: string) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify({
        schema_version: "tracefetch.provider-error.v1",
        code,
        message: code,
      }));
    };
    let request: { action?: unknown; query?: unknown; limit?: unknown };
    try {
      request = JSON.parse(body);
    } catch {
      return refuse(400, "invalid_request");
    }
    if (request.action !== "search") return refuse(501, "unsupported_action");
    if (typeof request.query !== "string" || typeof request.limit !== "number") {
      return refuse(400, "invalid_request");
    }
    const count = request.query.startsWith("zzqx") ? 0 : Math.min(request.limit, 3);
    const candidates = Array.from({ length: count }, (_, i) => ({
      title: `Note ${i + 1}`,
      locator: `https://notes.example/${i + 1}`,
      snippet: "the deadline",
    }));
    return answer("notes", "notes", candidates)(_req, res, body);
  });
}

describe("a newcomer's first hour with the CLI", { concurrency: true }, () => {
  let notes: TestServer;
  let broken: TestServer;
  let provider: TestServer;
  let gateway: Listening;
  let gatewayUrl: string;
  let closedUrl: string;
  let folder: Awaited<ReturnType<typeof tempConfig>>;

  before(async () => {
    notes = await notesProvider();
    broken = await startServer(raw(200, "not the protocol"));
    provider = await startServer(answer("alpha", "alpha", []));
    gateway = await listen(
      createGateway(
        settingsFor(manifestOf([{ name: "alpha", endpoint: provider.url }]), {}, {
          allowLoopback: true,
        }),
      ).fetch,
    );
    gatewayUrl = `http://127.0.0.1:${gateway.port}`;
    const closed = await startServer(raw(200, "{}"));
    closedUrl = `http://127.0.0.1:${closed.port}`;
    await closed.close();
    folder = await tempConfig();
  });
  after(async () => {
    await gateway.close();
    await Promise.all([notes.close(), broken.close(), provider.close(), folder.remove()]);
  });

  describe("conformance: one entry point", () => {
    it("tracefetch conformance answers with command conformance; a failing case is exit 2, invalid_field, fix_input", async () => {
      const run = await runJson(["conformance", broken.url, "--name", "broken", "--scope", "x"]);
      assert.equal(run.envelope.command, "conformance");
      assert.equal(run.code, 2);
      assert.equal(run.envelope.code, "invalid_field");
      assert.equal(run.envelope.action, "fix_input");
      assert.equal(run.envelope.error.field, "endpoint");
      assert.ok(run.envelope.result.failed > 0);
      const usage = await runJson(["conformance", broken.url, "--timeout-ms", "x"]);
      assert.equal(usage.envelope.command, "conformance");
      assert.equal(usage.envelope.error.field, "timeout-ms");
    });

    it("with --name and --scope, identity is checked and passes for a provider that says them", async () => {
      const run = await runJson(["conformance", notes.url, "--name", "notes", "--scope", "notes"]);
      assert.equal(run.envelope.code, "ok", JSON.stringify(run.envelope.result.cases));
      const identity = run.envelope.result.cases.find((c: { case: string }) =>
        c.case === "identity"
      );
      assert.equal(identity.verdict, "pass");
      assert.equal(run.envelope.result.not_checked, 0);
      assert.equal(run.envelope.result.provider, "notes");
      const wrong = await runJson([
        "conformance",
        notes.url,
        "--name",
        "other",
        "--scope",
        "notes",
      ]);
      assert.equal(wrong.code, 2);
      assert.match(wrong.envelope.error.message, /identity/);
    });

    it("without --name and --scope, identity is not checked (never passed) and the provider's own identity is reported", async () => {
      const run = await runJson(["conformance", notes.url]);
      assert.equal(run.code, 0, JSON.stringify(run.envelope));
      const { result } = run.envelope;
      assert.equal(result.provider, null);
      assert.equal(result.scope, null);
      assert.deepEqual(result.reported, { provider: "notes", scope: "notes" });
      assert.equal(result.not_checked, 1);
      assert.equal(result.passed, result.cases.length - 1);
      const identity = result.cases.find((c: { case: string }) => c.case === "identity");
      assert.equal(identity.verdict, "not_checked");
      assert.match(identity.reasons[0], /not checked: .*provider "notes", scope "notes"/);

      const human = await runCli(["conformance", notes.url]);
      assert.equal(human.code, 0);
      assert.match(
        human.stdout,
        /declared: nothing, so identity is not checked; the provider says provider "notes", scope "notes"/,
      );
      assert.match(human.stdout, /result: +PASS \(13 of 14 cases pass, 1 not checked\)/);
      assert.match(human.stdout, /=== 5\/14 identity: NOT CHECKED/);
    });

    it("--name without --scope (or the reverse) is refused, naming the missing one", async () => {
      const name = await runJson(["conformance", notes.url, "--name", "notes"]);
      assert.equal(name.envelope.code, "invalid_field");
      assert.equal(name.envelope.error.field, "scope");
      const scope = await runJson(["conformance", notes.url, "--scope", "notes"]);
      assert.equal(scope.envelope.error.field, "name");
      const query = await runJson(["conformance", notes.url, "--query", " "]);
      assert.equal(query.envelope.error.field, "query");
    });

    it("npm run conformance is tracefetch conformance: the same envelope and the same exit code", async () => {
      const args = [broken.url, "--name", "broken", "--scope", "broken", "--json"];
      const [viaNpm, viaBin] = await Promise.all([
        runIn("npm", ["run", "-s", "conformance", "--", ...args]),
        runCli(["conformance", ...args]),
      ]);
      const npmEnvelope = oneEnvelope(viaNpm);
      const binEnvelope = oneEnvelope(viaBin);
      assert.equal(viaNpm.code, 2);
      assert.equal(viaNpm.code, viaBin.code);
      delete npmEnvelope.request_id;
      delete binEnvelope.request_id;
      assert.deepEqual(npmEnvelope, binEnvelope);
      const help = await runIn("npm", ["run", "-s", "conformance", "--", "--help"]);
      assert.equal(help.code, 0);
      assert.match(help.stdout, /usage: tracefetch conformance URL \[--name N --scope S\]/);
    });
  });

  describe("global options before the command", () => {
    it("tracefetch --json status is tracefetch status --json", async () => {
      const envelope = oneEnvelope(await runCli(["--json", "status", "--gateway", gatewayUrl]));
      assert.equal(envelope.command, "status");
      assert.equal(envelope.code, "ok");
    });

    it("--gateway URL before the command is the gateway asked", async () => {
      const asked = oneEnvelope(await runCli(["--gateway", gatewayUrl, "--json", "status"]));
      assert.equal(asked.code, "ok");
      const joined = oneEnvelope(await runCli([`--gateway=${closedUrl}`, "status", "--json"]));
      assert.equal(joined.code, "transport_error");
      assert.match(joined.error.message, new RegExp(closedUrl));
    });

    it("another option before the command is unknown_field, naming it; help still works", async () => {
      const envelope = oneEnvelope(await runCli(["--json", "--limit", "3", "search", "x"]));
      assert.equal(envelope.code, "unknown_field");
      assert.equal(envelope.error.field, "--limit");
      assert.match(envelope.error.message, /goes after the command/);
      const help = await runCli(["--json", "--help", "status"]);
      assert.equal(help.code, 0);
      assert.match(help.stdout, /^usage: tracefetch status/);
    });
  });

  it("search with no gateway reachable suggests npm start or --manifest; the envelope stays transport_error, retry", async () => {
    const run = await runJson(["search", "deadline", "--gateway", closedUrl]);
    assert.equal(run.envelope.code, "transport_error");
    assert.equal(run.envelope.action, "retry");
    assert.equal(run.code, 1);
    const human = await runCli(["search", "deadline", "--gateway", closedUrl]);
    assert.match(human.stderr, /npm start/);
    assert.match(human.stderr, /--manifest FILE/);
    assert.match(human.stderr, /\(transport_error; next: retry\)/);
  });

  it("declining connect's question is not a success: human_decision_required, exit 3, the saved connection kept", async () => {
    const config = join(folder.dir, "decline");
    await mkdir(join(config, "tracefetch"), { recursive: true });
    const path = join(config, "tracefetch", "connection.json");
    const saved = '{"version":1,"gateway":"http://127.0.0.1:1","token_env":"TRACEFETCH_TOKEN"}';
    await writeFile(path, saved);
    const questions: string[] = [];
    const ctx: CliContext = {
      env: { XDG_CONFIG_HOME: config },
      settings: () => {
        throw new Error("connect only calls a gateway: it never parses the gateway's settings");
      },
      machine: false,
      requestId: "decline-test",
      stdin: () => new ReadableStream(),
      writeStderr: () => {},
      writeStdout: () => {},
      stdinIsTTY: true,
      stderrIsTTY: true,
      stderrPaint: NO_PAINT,
      fetch: () => Promise.reject(new Error("a declined connect must not call the gateway")),
      confirm: (question) => {
        questions.push(question);
        return Promise.resolve(false);
      },
      interrupted: () => new AbortController().signal,
    };
    const reply = await connectCommand(["http://127.0.0.1:2"], ctx);
    assert.equal(reply.kind, "envelope");
    const envelope = reply.kind === "envelope" ? reply.envelope : null;
    assert.equal(questions.length, 1);
    assert.equal(envelope?.code, "human_decision_required");
    assert.equal(envelope?.exit_code, 3);
    assert.equal(envelope?.ok, false);
    assert.equal(envelope?.action, "connect");
    assert.match(envelope?.error?.message ?? "", /not replaced: the saved connection .* is kept/);
    assert.equal(await readFile(path, "utf8"), saved, "the saved connection is unchanged");
  });

  describe("human output never points at JSON fields a person does not see", () => {
    it("validate lists every problem and says how many more, never 'in result.issues'", async () => {
      const file = join(folder.dir, "bad.json");
      await writeFile(
        file,
        JSON.stringify(manifestOf([
          { name: "alpha", endpoint: "https://alpha.example", flavour: "mint" },
          { name: "beta", endpoint: "https://beta.example", colour: "red" },
        ])),
      );
      const human = await runCli(["validate", file]);
      assert.equal(human.code, 2);
      assert.doesNotMatch(human.stdout + human.stderr, /result\./);
      assert.match(human.stderr, /\(and 1 more\)/);
      assert.match(human.stdout, /providers\.0\.flavour/);
      assert.match(human.stdout, /providers\.1\.colour/);
    });

    it("a search no provider could serve names each provider and why, not 'see result'", async () => {
      const skipped = join(folder.dir, "exa-only.json");
      await writeFile(skipped, JSON.stringify(manifestOf([{ name: "exa", scope: "web" }])));
      const none = await runCli(["search", "deadline", "--manifest", skipped], {
        env: { EXA_API_KEY: "" },
      });
      assert.equal(none.code, 4);
      const said = none.stdout + none.stderr;
      assert.doesNotMatch(said, /see (result|decision)/);
      assert.match(none.stderr, /exa skipped \(not_configured\) \(all_providers_failed/);
      assert.match(none.stdout, /warning: no selected provider could be contacted: exa skipped/);

      const unreachable = join(folder.dir, "closed.json");
      await writeFile(
        unreachable,
        JSON.stringify(manifestOf([{ name: "alpha", endpoint: `${closedUrl}/search` }])),
      );
      const failed = await runCli(["search", "deadline", "--manifest", unreachable], {
        env: LOOPBACK,
      });
      assert.equal(failed.code, 4);
      assert.doesNotMatch(failed.stdout + failed.stderr, /see (result|decision)/);
      assert.match(failed.stderr, /: alpha adapter_unavailable/);
      const machine = await runJson(["search", "deadline", "--manifest", unreachable], {
        env: LOOPBACK,
      });
      assert.equal(machine.envelope.code, "all_providers_failed");
    });
  });

  it("npm run dev:token -- --help prints the usage and exits 0; a wrong command is exit 2", async () => {
    const help = await runIn("node", ["--import", "tsx", "scripts/dev-token.ts", "--help"]);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /^usage: npm run -s dev:token -- keygen/);
    assert.match(help.stdout, /mint \[--sub S\]/);
    const mintHelp = await runIn("node", ["--import", "tsx", "scripts/dev-token.ts", "mint", "-h"]);
    assert.equal(mintHelp.code, 0, mintHelp.stderr);
    const wrong = await runIn("node", ["--import", "tsx", "scripts/dev-token.ts", "mint", "--x"]);
    assert.equal(wrong.code, 2);
    assert.match(wrong.stderr, /usage:/);
    assert.doesNotMatch(wrong.stderr, /at .*\.ts:\d+/, "a usage problem, not a stack trace");
  });
});

describe("the docs say where each form of the CLI works", () => {
  const read = (path: string) => readFile(join(ROOT, path), "utf8");
  /** Prose lines (outside fenced blocks) of a markdown file. */
  const prose = (text: string) => {
    let fenced = false;
    return text.split("\n").filter((line) => {
      if (line.startsWith("```")) {
        fenced = !fenced;
        return false;
      }
      return !fenced;
    });
  };

  it("docs/cli.md: npx tracefetch only inside the repository; npm link or npm install -g . elsewhere", async () => {
    const text = await read("docs/cli.md");
    assert.match(text, /## Where each form works/);
    assert.match(text, /Outside this repository, never run `npx tracefetch`/);
    assert.match(text, /public npm registry for a package named `tracefetch`/);
    assert.match(text, /`npm link` \(or `npm install -g \.`\)/);
    assert.match(text, /`npm run conformance -- \.\.\.` +\| only inside this repository/);
  });

  it("docs/cli.md: no inline code span breaks across lines", async () => {
    const broken = prose(await read("docs/cli.md"))
      .filter((line) => (line.match(/`/g) ?? []).length % 2 === 1);
    assert.deepEqual(broken, []);
  });

  it("README.md's CLI section: npx inside the repository, npm link outside", async () => {
    const text = await read("README.md");
    const start = text.indexOf("## The CLI");
    const section = text.slice(start, text.indexOf("\n## ", start + 1));
    assert.match(section, /`npx tracefetch` works only inside this repository/);
    assert.match(section, /`npm link` \(or `npm install -g \.`\)/);
  });
});
