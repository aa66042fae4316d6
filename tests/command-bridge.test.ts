/**
 * The command bridge runs TraceFetch 1.0 command providers (real executables in
 * fixtures/commands/) behind HTTP endpoints, and a real gateway searches them over 127.0.0.1: each
 * way a command can fail must reach the caller as the outcome 1.0 reported, and no child may
 * outlive its timeout or its caller.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { commandBridge } from "../providers/command-bridge/bridge.ts";
import { parseCommandManifest } from "../providers/command-bridge/command-manifest.ts";
import { listen } from "../src/runtime/node-listen.ts";
import { gateway, search } from "./support/gateway.ts";
import { sleep } from "./support/servers.ts";

const FIXTURES = fileURLToPath(new URL("./fixtures/commands/", import.meta.url));
const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SECRET = "zq-leaky-secret-4711";

type Entry = { name: string; command: string[]; timeout_seconds?: number };

/** A bridge over `entries` (scope = name) and a gateway over its endpoints; both closed by `close`. */
async function bridged(entries: Entry[], gatewayTimeouts: Record<string, number> = {}) {
  const manifest = parseCommandManifest(
    {
      schema_version: "tracefetch.providers.v1",
      providers: entries.map((e) => ({ scope: e.name, ...e })),
    },
    FIXTURES,
  );
  const bridge = commandBridge(manifest.providers);
  const server = await listen(bridge.fetch);
  const app = gateway(entries.map((e) => ({
    name: e.name,
    endpoint: `http://127.0.0.1:${server.port}/${e.name}`,
    timeout_seconds: gatewayTimeouts[e.name] ?? 10,
  })));
  return {
    app,
    close: async () => {
      await bridge.stop();
      await server.close();
    },
  };
}

/** Bridges still open; closed after all tests, so a test sees what the bridge does on its own. */
const open: Array<() => Promise<void>> = [];

/** Searches `entries` and returns the envelope's text, body and attempts by provider name. */
async function searchAll(entries: Entry[], gatewayTimeouts: Record<string, number> = {}) {
  const run = await bridged(entries, gatewayTimeouts);
  open.push(run.close);
  const { text, body } = await search(run.app, { q: "actor isolation", limit: "2" });
  // deno-lint-ignore no-explicit-any
  const attempts = new Map<string, any>(body.result.candidates.map((a: any) => [a.provider, a]));
  return { text, body, attempts };
}

/**
 * The timeouts of the cases that end a hanging command: long enough for the command (a node
 * process) to have started and set its signal handlers even on a loaded machine, where 3 s was
 * seen to fall short; a process still starting dies of the first SIGTERM and logs nothing.
 */
const COMMAND_START_S = 6;

let logDir = "";
const log = (tag: string) => readFileSync(join(logDir, `${tag}.log`), "utf8");
const pidOf = (tag: string) => Number(/^pid (\d+)$/m.exec(log(tag))?.[1]);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function assertGone(pid: number, withinMs: number) {
  const until = performance.now() + withinMs;
  while (alive(pid) && performance.now() < until) await sleep(25);
  assert.equal(alive(pid), false, `process ${pid} is still running`);
}

describe("command bridge: TraceFetch 1.0 command providers behind a real gateway", () => {
  before(() => {
    logDir = mkdtempSync(join(tmpdir(), "tracefetch-bridge-"));
    process.env.TRACEFETCH_FIXTURE_LOG_DIR = logDir;
    process.env.TRACEFETCH_FIXTURE_ENV = "inherited";
  });
  after(async () => {
    await Promise.all(open.map((close) => close()));
    rmSync(logDir, { recursive: true, force: true });
  });

  it("a well-behaved command answers: its candidates and warnings, the request from stdin, the inherited environment", async () => {
    const { body, attempts } = await searchAll([
      { name: "good", command: ["./well-behaved.mjs", "good", "good"] },
    ]);
    assert.equal(body.code, "ok");
    const attempt = attempts.get("good");
    assert.equal(attempt.outcome, "success");
    assert.equal(attempt.candidate_count, 2);
    assert.deepEqual(attempt.candidates.map((c: { title: string }) => c.title), [
      "actor isolation 1",
      "actor isolation 2",
    ]);
    assert.deepEqual(attempt.candidates[0].metadata, { rank: 1, env: "inherited" });
    assert.ok(attempt.warnings.includes("answered by the well-behaved fixture"));
  });

  it("a command hanging past the gateway's deadline is a timeout, and the disconnect ends it with SIGTERM", async () => {
    // COMMAND_START_S, not 1: the command must have started (a node process) before the deadline
    // fires, even on a loaded machine.
    const { attempts } = await searchAll([{ name: "hang", command: ["./hang.mjs", "hang"] }], {
      hang: COMMAND_START_S,
    });
    assert.equal(attempts.get("hang").outcome, "timeout");
    assert.equal(attempts.get("hang").budget, "provider_timeout");
    await assertGone(pidOf("hang"), 1_500);
    assert.match(log("hang"), /^TERM$/m);
  });

  it("a command hanging past its own timeout_seconds is search_failed, and it is ended with SIGTERM", async () => {
    const { attempts } = await searchAll([
      { name: "slow", command: ["./hang.mjs", "slow"], timeout_seconds: COMMAND_START_S },
    ]);
    const attempt = attempts.get("slow");
    assert.equal(attempt.outcome, "search_failed");
    assert.equal(attempt.code, "search_failed");
    assert.match(attempt.message, /no answer within 6 s \(timeout_seconds\)/);
    await assertGone(pidOf("slow"), 1_500);
    assert.match(log("slow"), /^TERM$/m);
  });

  it("a command ignoring SIGTERM is killed with SIGKILL after the 2 s grace", async () => {
    const { attempts } = await searchAll([
      {
        name: "stubborn",
        command: ["./hang-ignoring-sigterm.mjs", "stubborn"],
        timeout_seconds: COMMAND_START_S,
      },
    ]);
    assert.equal(attempts.get("stubborn").outcome, "search_failed");
    const pid = pidOf("stubborn");
    await sleep(1_000);
    assert.match(log("stubborn"), /^TERM$/m);
    assert.equal(alive(pid), true, "SIGKILL came before the grace period ended");
    await assertGone(pid, 2_000);
  });

  it("a command flooding stdout past 2,000,000 bytes is provider_protocol_error body_too_large, and it is ended", async () => {
    const { attempts } = await searchAll([{ name: "flood", command: ["./flood.mjs", "flood"] }]);
    assert.equal(attempts.get("flood").outcome, "provider_protocol_error");
    assert.equal(attempts.get("flood").code, "body_too_large");
    await assertGone(pidOf("flood"), 3_000);
  });

  it("a nonzero exit is search_failed with the exit status and stderr, its secrets redacted", async () => {
    const { text, attempts } = await searchAll([
      { name: "leaky", command: ["./leaky-stderr.mjs"] },
      { name: "three", command: ["./exit-code.mjs", "3"] },
    ]);
    assert.equal(attempts.get("leaky").outcome, "search_failed");
    assert.equal(attempts.get("leaky").code, "search_failed");
    assert.match(attempts.get("leaky").message, /exit 1: upstream refused: .*\[redacted\]/);
    assert.ok(!text.includes(SECRET), "a secret from stderr reached the caller");
    assert.ok(!text.includes("ghp_zq"), "a token from stderr reached the caller");
    assert.equal(attempts.get("three").outcome, "search_failed");
    assert.equal(attempts.get("three").code, "search_failed");
    assert.match(attempts.get("three").message, /exit 3: failing on purpose/);
  });

  it("stdout the protocol refuses is served as written, so the gateway reports provider_protocol_error", async () => {
    const { attempts } = await searchAll([
      { name: "garbled", command: ["./malformed.mjs", "not-json", "garbled", "garbled"] },
      { name: "imposter", command: ["./malformed.mjs", "wrong-identity", "imposter", "imposter"] },
      { name: "extra", command: ["./malformed.mjs", "unknown-field", "extra", "extra"] },
    ]);
    const outcomes = ["garbled", "imposter", "extra"].map((n) => {
      const a = attempts.get(n);
      return [n, a.outcome, a.code, a.candidate_count];
    });
    assert.deepEqual(outcomes, [
      ["garbled", "provider_protocol_error", "invalid_json", 0],
      ["imposter", "provider_protocol_error", "identity_mismatch", 0],
      ["extra", "provider_protocol_error", "schema_violation", 0],
    ]);
  });

  it("a missing executable, path-like or bare, is adapter_unavailable; a bare name on PATH runs", async () => {
    const { attempts } = await searchAll([
      { name: "missing", command: ["./no-such-command.mjs"] },
      { name: "missing-bare", command: ["tracefetch-fixture-no-such-command"] },
      { name: "on-path", command: ["false"] },
    ]);
    assert.equal(attempts.get("missing").outcome, "adapter_unavailable");
    assert.equal(attempts.get("missing").code, "adapter_unavailable");
    assert.match(attempts.get("missing").message, /"\.\/no-such-command\.mjs" was not found/);
    assert.equal(attempts.get("missing-bare").outcome, "adapter_unavailable");
    assert.equal(attempts.get("on-path").outcome, "search_failed");
    assert.match(attempts.get("on-path").message, /exit 1/);
  });

  it("a 1.0 manifest: disabled and command-less entries are not served, duplicate names are refused", () => {
    const entries = [
      { name: "a", scope: "s", command: ["./x"], source_class: "note-candidate" },
      { name: "b", scope: "s", command: ["x"], timeout_seconds: 0 },
      { name: "c", scope: "s", endpoint: "https://c.example/search" },
    ];
    const manifest = parseCommandManifest(
      { schema_version: "tracefetch.providers.v1", providers: entries },
      "/srv/providers",
    );
    assert.deepEqual(manifest.providers.map((p) => [p.name, p.executable, p.timeoutMs]), [
      ["a", join("/srv/providers", "x"), 60_000],
    ]);
    assert.deepEqual(manifest.skipped.map((s) => s.name), ["b", "c"]);
    assert.throws(
      () =>
        parseCommandManifest({
          schema_version: "tracefetch.providers.v1",
          providers: [entries[0], entries[0]],
        }, "."),
      /listed twice/,
    );
  });

  it("the CLI reads a manifest file, resolves commands against its folder and prints each endpoint", async () => {
    const cli = spawn("node", [
      "--import",
      "tsx",
      "providers/command-bridge/serve.ts",
      "--manifest",
      "tests/fixtures/commands/tracefetch-1.0.json",
    ], { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] });
    try {
      let printed = "";
      cli.stdout.setEncoding("utf8");
      for await (const chunk of cli.stdout) {
        printed += chunk;
        if (printed.includes("not served")) break;
      }
      const endpoint = /provider "good" \(scope "notes"\) at (http:\/\/127\.0\.0\.1:\d+\/good)/
        .exec(printed)?.[1];
      assert.ok(endpoint, printed);
      assert.match(printed, /provider "retired" not served: disabled/);
      const res = await fetch(endpoint, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          schema_version: "tracefetch.provider-request.v1",
          action: "search",
          query: "deadline",
          limit: 1,
        }),
      });
      assert.equal(res.status, 200);
      const answer = JSON.parse(await res.text());
      assert.equal(answer.provider, "good");
      assert.equal(answer.candidates[0].title, "deadline 1");
    } finally {
      const exited = new Promise((done) => cli.once("exit", done));
      cli.kill("SIGTERM");
      await exited;
    }
  });
});
