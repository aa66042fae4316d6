/**
 * `tracefetch mcp`: the gateway's MCP tools over stdio, relayed to a gateway (--gateway URL, the
 * saved connection, or the default URL) or served in process (--default, --manifest), for the
 * official SDK's stdio client and for the MCP Inspector's CLI mode, each a real process. Same
 * tools and same text as `/mcp` itself.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { launch, type Launched } from "../src/runtime/launch.ts";
import { readSettings } from "../src/config/settings.ts";
import { MCP_TOOL_NAMES } from "../src/protocol/mcp-tools.ts";
import { cleanEnv, runCli } from "./support/cli.ts";
import { isDeno, runtimeListen } from "./support/runtime-listen.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const BIN = join(ROOT, "bin/tracefetch.js");
const INSPECTOR = join(ROOT, "node_modules/.bin/mcp-inspector-cli");
/** How long one stdio session may take here: a start, a search of the embedded default, a stop. */
const SESSION_MS = 30_000;

type ToolText = { tools: string[]; text: string; structured: Record<string, unknown> };

/** The SDK's own stdio client against `tracefetch mcp ARGS`: the tool list and a search. */
async function overStdio(
  args: string[],
  env: Record<string, string> = {},
): Promise<ToolText & { stderr: string }> {
  const transport = new StdioClientTransport({
    command: "node",
    args: [BIN, "mcp", ...args],
    env: { ...cleanEnv(), NO_COLOR: "1", ...env },
    stderr: "pipe",
  });
  const stderr: Buffer[] = [];
  transport.stderr?.on("data", (c: Buffer) => stderr.push(c));
  const client = new Client({ name: "stdio-test", version: "1" });
  await client.connect(transport);
  try {
    return { ...await toolText(client), stderr: Buffer.concat(stderr).toString("utf8") };
  } finally {
    await client.close();
  }
}

async function toolText(client: Client): Promise<ToolText> {
  const { tools } = await client.listTools();
  const result = await client.callTool({
    name: "search",
    arguments: { query: "deadline", limit: 3 },
  });
  const [block] = result.content as Array<{ type: string; text: string }>;
  return {
    tools: tools.map((t) => t.name).sort(),
    text: block?.text ?? "",
    structured: result.structuredContent as Record<string, unknown>,
  };
}

/** The text without its timings, which differ from one search to the next. */
const untimed = (text: string) => text.replace(/ in \d+ ms/g, "");

/** The Inspector's CLI mode (`--cli`), a process of its own, against `tracefetch mcp ARGS`. */
function inspector(
  args: string[],
  method: string[],
): Promise<{ code: number | null; out: string; err: string }> {
  // It finds its own package.json by a path it tests against the working folder; run it one
  // folder below the checkout's root, where that path resolves.
  const child = spawn("node", [INSPECTOR, "--cli", "node", BIN, "mcp", ...args, ...method], {
    cwd: join(ROOT, "src"),
    env: { ...cleanEnv(), NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on("data", (c: Buffer) => out.push(c));
  child.stderr.on("data", (c: Buffer) => err.push(c));
  const timer = setTimeout(() => child.kill(), SESSION_MS);
  return new Promise((resolve) =>
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({
        code,
        out: Buffer.concat(out).toString("utf8"),
        err: Buffer.concat(err).toString("utf8"),
      });
    })
  );
}

/** A case's bound: a few sessions; on each `it`, as Deno's node:test ignores a suite's timeout. */
const CASE = { timeout: 4 * SESSION_MS };

describe(`tracefetch mcp over stdio (tests on ${isDeno ? "Deno" : "Node"})`, () => {
  let gateway: Launched;
  let http: ToolText;

  before(async () => {
    gateway = await launch(
      readSettings({ PORT: "0", TRACEFETCH_DESCRIBE_PROVIDERS: "off" }),
      runtimeListen,
    );
    const client = new Client({ name: "http-test", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", gateway.url)));
    http = await toolText(client);
    await client.close();
  });
  after(() => gateway?.close());

  it(
    "--gateway URL: the SDK's stdio client gets the tools and text of the gateway's /mcp",
    CASE,
    async () => {
      const stdio = await overStdio(["--gateway", gateway.url]);
      assert.deepEqual(stdio.tools, http.tools);
      assert.deepEqual(stdio.tools, [...MCP_TOOL_NAMES].sort());
      assert.equal(untimed(stdio.text), untimed(http.text));
      assert.equal(stdio.structured.code, "ok");
      assert.match(stdio.stderr, /relaying stdio to http:\/\/127\.0\.0\.1:\d+\/mcp/);
    },
  );

  it(
    "--default: the same tools and text, the gateway running in the CLI's process",
    CASE,
    async () => {
      const stdio = await overStdio(["--default"]);
      assert.deepEqual(stdio.tools, http.tools);
      assert.equal(untimed(stdio.text), untimed(http.text));
      assert.match(stdio.stderr, /serving embedded default manifest in process/);
    },
  );

  it(
    "a call with a progress token gets the gateway's progress notifications through the relay",
    CASE,
    async () => {
      const transport = new StdioClientTransport({
        command: "node",
        args: [BIN, "mcp", "--gateway", gateway.url],
        env: { ...cleanEnv(), NO_COLOR: "1" },
        stderr: "pipe",
      });
      const client = new Client({ name: "stdio-progress", version: "1" });
      await client.connect(transport);
      // What the relay wrote, read where the transport hands it over: the SDK's client drops a
      // progress notification it reads in the same chunk as the result (it handles notifications
      // a microtask later, after the result removed the token), which a loaded pipe makes likely.
      const seen: Array<{ method?: string; id?: unknown; params?: { message?: string } }> = [];
      const deliver = transport.onmessage;
      transport.onmessage = (message) => {
        seen.push(message as (typeof seen)[number]);
        deliver?.(message);
      };
      try {
        const result = await client.callTool(
          { name: "search", arguments: { query: "deadline", limit: 3 } },
          undefined,
          { onprogress: () => {} },
        );
        assert.equal((result.structuredContent as { code: string }).code, "ok");
        const answer = seen.findIndex((m) => m.method === undefined && m.id !== undefined);
        const progress = seen.filter((m) => m.method === "notifications/progress");
        assert.ok(progress.length >= 1, "at least one provider's progress");
        assert.ok(
          progress.some((m) => /workspace/.test(String(m.params?.message))),
          JSON.stringify(progress),
        );
        assert.ok(
          seen.slice(answer + 1).every((m) => m.method !== "notifications/progress"),
          "every progress notification comes before the result",
        );
      } finally {
        await client.close();
      }
    },
  );

  it(
    "without --gateway: the gateway tracefetch connect saved, else http://127.0.0.1:8787",
    CASE,
    async () => {
      const config = await mkdtemp(join(tmpdir(), "tracefetch-mcp-saved-"));
      try {
        await mkdir(join(config, "tracefetch"));
        await writeFile(
          join(config, "tracefetch", "connection.json"),
          JSON.stringify({ version: 1, gateway: gateway.url, token_env: "TEAM_TOKEN" }),
        );
        const saved = await overStdio([], { XDG_CONFIG_HOME: config });
        assert.deepEqual(saved.tools, http.tools);
        assert.equal(untimed(saved.text), untimed(http.text));
        const port = new URL(gateway.url).port;
        assert.match(
          saved.stderr,
          new RegExp(`relaying stdio to http://127\\.0\\.0\\.1:${port}/mcp`),
        );
        // No saved connection: the default URL. stdin ends at once, so nothing is sent to it.
        const none = await runCli(["mcp"], { config: join(config, "none") });
        assert.equal(none.code, 0, none.stderr);
        assert.equal(none.stdout, "");
        assert.match(none.stderr, /relaying stdio to http:\/\/127\.0\.0\.1:8787\/mcp/);
      } finally {
        await rm(config, { recursive: true, force: true });
      }
    },
  );

  it("--manifest FILE serves that manifest's providers", CASE, async () => {
    const dir = await mkdtemp(join(tmpdir(), "tracefetch-mcp-stdio-"));
    try {
      const file = join(dir, "manifest.json");
      await writeFile(
        file,
        JSON.stringify({
          schema_version: "tracefetch.providers.v1",
          providers: [{ name: "workspace", scope: "local" }],
        }),
      );
      const stdio = await overStdio(["--manifest", file]);
      assert.equal(stdio.structured.code, "ok");
      assert.match(stdio.text, /provider workspace: \d+ results/);
      assert.doesNotMatch(stdio.text, /provider engineering/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("the Inspector's CLI lists the tools and runs a search, over --gateway and --default", {
    ...CASE,
    skip: !existsSync(INSPECTOR) && "node_modules/.bin/mcp-inspector-cli is not installed",
  }, async () => {
    for (const args of [["--gateway", gateway.url], ["--default"]]) {
      const listed = await inspector(args, ["--method", "tools/list"]);
      assert.equal(listed.code, 0, listed.err);
      const names = (JSON.parse(listed.out).tools as Array<{ name: string }>).map((t) => t.name)
        .sort();
      assert.deepEqual(names, http.tools);
      const called = await inspector(args, [
        "--method",
        "tools/call",
        "--tool-name",
        "search",
        "--tool-arg",
        "query=deadline",
        "--tool-arg",
        "limit=3",
      ]);
      assert.equal(called.code, 0, called.err);
      const result = JSON.parse(called.out);
      assert.equal(untimed(result.content[0].text), untimed(http.text));
    }
  });

  it(
    "a refusal before the relay starts is one line on stderr, exit 2, and nothing on stdout",
    CASE,
    async () => {
      const run = await runCli(["mcp", "--gateway", "ftp://x.example"]);
      assert.equal(run.code, 2);
      assert.equal(run.stdout, "");
      assert.match(run.stderr, /^tracefetch mcp: the gateway URL/);
      const both = await runCli(["mcp", "--default", "--gateway", gateway.url]);
      assert.equal(both.code, 2);
      assert.equal(both.stdout, "");
    },
  );

  it(
    "a gateway that cannot be reached answers each request with a JSON-RPC error, on stdout only",
    CASE,
    async () => {
      const input = `${JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/list" })}\n`;
      const run = await runCli(["mcp", "--gateway", "http://127.0.0.1:9"], { input });
      assert.equal(run.code, 0);
      const lines = run.stdout.trim().split("\n").map((l) => JSON.parse(l));
      assert.equal(lines.length, 1);
      assert.equal(lines[0].id, 7);
      assert.match(lines[0].error.message, /could not be reached/);
    },
  );
});
