/**
 * `tracefetch conformance --manifest FILE --provider NAME` on `transport: "mcp"` entries: the real
 * CLI against MCP servers on 127.0.0.1 (a scripted one and server-memory behind supergateway),
 * each case with its transcript; a mapping the server's answers break fails, naming the case.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli, runJson } from "./support/cli.ts";
import { manifestOf } from "./support/gateway.ts";
import { type ScriptedMcp, startScriptedMcp } from "./support/scripted-mcp.ts";
import {
  type Bridge,
  memoryFile,
  memoryMapping,
  missingBin,
  startBridge,
} from "./support/mcp-bridge.ts";

const missing = missingBin("supergateway", "mcp-server-memory");
if (missing !== null) console.log(`# skipped: node_modules/.bin/${missing} is not installed`);

describe("conformance of MCP provider entries", () => {
  let scripted: ScriptedMcp;
  let memory: Bridge | null = null;
  let dir: string;
  const manifestFile = async (providers: Array<Record<string, unknown> & { name: string }>) => {
    const file = join(dir, `m-${Math.random().toString(16).slice(2)}.json`);
    await writeFile(file, JSON.stringify(manifestOf(providers)));
    return file;
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "tracefetch-conf-mcp-"));
    scripted = await startScriptedMcp(["find", "other"]);
    scripted.tool.answer = (args) =>
      String(args.q).startsWith("zzqx") ? { structuredContent: { hits: [] } } : {
        structuredContent: {
          hits: [{ t: "A", u: "https://docs.example/a" }, { t: "B", u: "https://docs.example/b" }],
        },
      };
    if (missing === null) {
      memory = await startBridge("mcp-server-memory", { MEMORY_FILE_PATH: await memoryFile(dir) });
    }
  });
  after(async () => {
    await Promise.all([scripted?.close(), memory?.close()]);
    await rm(dir, { recursive: true, force: true });
  });

  const scriptedEntry = (mcp: Record<string, unknown> = {}) => ({
    name: "tool",
    transport: "mcp",
    endpoint: scripted.endpoint,
    auth: { type: "bearer", secret: "TOOL_KEY" },
    mcp: {
      tool: "find",
      arguments: { q: "{query}", n: "{limit}" },
      results: "hits",
      fields: { title: "t", locator: "u", snippet: "t" },
      ...mcp,
    },
  });

  it("passes every case, with each exchange in the transcript and the secret sent but never shown", async () => {
    const file = await manifestFile([scriptedEntry()]);
    const args = ["conformance", "--manifest", file, "--provider", "tool", "--query", "deadline"];
    const env = { TRACEFETCH_ALLOW_LOOPBACK: "1", TOOL_KEY: "k-secret-1" };
    const { envelope } = await runJson(args, { env });
    assert.equal(envelope.code, "ok", JSON.stringify(envelope.result.cases));
    assert.deepEqual(envelope.result.cases.map((c: { case: string }) => c.case), [
      "mcp-initialize",
      "mcp-initialized",
      "mcp-tool-listed",
      "mcp-search",
      "mcp-limit",
      "mcp-honest-empty",
    ]);
    const limit = envelope.result.cases.find((c: { case: string }) => c.case === "mcp-limit");
    assert.match(limit.reasons.join(" "), /advice: the tool sent 2 results for limit 1/);
    assert.equal(scripted.calls.at(-1)?.headers.authorization, "Bearer k-secret-1");
    const people = await runCli(args, { env });
    assert.equal(people.code, 0, people.stderr);
    assert.match(people.stdout, /=== 4\/6 mcp-search: PASS/);
    assert.match(people.stdout, /> authorization: \[redacted\]/);
    assert.match(
      people.stdout,
      /"method":"tools\/call","params":\{"name":"find","arguments":\{"q":"deadline","n":10\}\}/,
    );
    assert.doesNotMatch(people.stdout, /k-secret-1/);
  });

  it("passes a server whose SSE answers stay open after their response, as the gateway reads them", async () => {
    scripted.tool.sse = true;
    scripted.tool.keepOpen = true;
    try {
      const file = await manifestFile([scriptedEntry()]);
      const args = [
        "conformance",
        "--manifest",
        file,
        "--provider",
        "tool",
        "--timeout-ms",
        "5000",
      ];
      const { envelope } = await runJson(args, { env: { TOOL_KEY: "k" } });
      assert.equal(envelope.code, "ok", JSON.stringify(envelope.result.cases));
      const search = envelope.result.cases.find((c: { case: string }) => c.case === "mcp-search");
      assert.equal(search.verdict, "pass");
    } finally {
      scripted.tool.sse = false;
      scripted.tool.keepOpen = false;
    }
  });

  it("a tool the server lacks and a results path it does not send fail their cases", async () => {
    const env = { TOOL_KEY: "k" };
    const lacking = await runJson([
      "conformance",
      "--manifest",
      await manifestFile([scriptedEntry({ tool: "fnd" })]),
      "--provider",
      "tool",
    ], { env });
    assert.equal(lacking.envelope.code, "invalid_field");
    const listed = lacking.envelope.result.cases.find((c: { case: string }) =>
      c.case === "mcp-tool-listed"
    );
    assert.equal(listed.verdict, "fail");
    assert.match(listed.reasons[0], /no tool "fnd" among 2 \(find, other\)/);
    const path = await runJson([
      "conformance",
      "--manifest",
      await manifestFile([scriptedEntry({ results: "items" })]),
      "--provider",
      "tool",
    ], { env });
    const search = path.envelope.result.cases.find((c: { case: string }) =>
      c.case === "mcp-search"
    );
    assert.equal(search.verdict, "fail");
    assert.match(search.reasons[0], /schema_violation: .*results path "items"/);
  });

  it("the official memory server behind supergateway passes, its entity mapped from its name", {
    skip: missing !== null,
  }, async () => {
    const file = await manifestFile([{
      name: "memory",
      transport: "mcp",
      endpoint: memory?.url,
      mcp: memoryMapping,
    }]);
    const run = await runCli([
      "conformance",
      "--manifest",
      file,
      "--provider",
      "memory",
      "--query",
      "deadline",
    ]);
    assert.equal(run.code, 0, run.stdout);
    assert.match(run.stdout, /memory:\/\/Deadline budget|"name":"Deadline budget"/);
    assert.match(run.stdout, /result: {3}PASS \(6 of 6 cases pass\)/);
  });

  it("an unknown provider is refused with a did-you-mean", async () => {
    const file = await manifestFile([scriptedEntry()]);
    const { envelope } = await runJson(["conformance", "--manifest", file, "--provider", "tol"], {
      env: { TOOL_KEY: "k" },
    });
    assert.equal(envelope.code, "invalid_field");
    assert.match(envelope.error.message, /no provider "tol"; did you mean "tool"/);
  });
});
