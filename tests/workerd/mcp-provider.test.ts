/**
 * MCP providers in workerd: the bundled worker calls MCP servers on 127.0.0.1 with the runtime's
 * own fetch: a scripted server that keeps sessions (and forgets them), and the official
 * server-memory behind supergateway, whose answers come as SSE streams.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Miniflare } from "miniflare";
import { startWorker } from "./miniflare.ts";
import { assertEnvelope, manifestOf } from "../support/gateway.ts";
import { type ScriptedMcp, startScriptedMcp } from "../support/scripted-mcp.ts";
import {
  type Bridge,
  memoryFile,
  memoryMapping,
  missingBin,
  startBridge,
} from "../support/mcp-bridge.ts";

const missing = missingBin("supergateway", "mcp-server-memory");
if (missing !== null) console.log(`# skipped: node_modules/.bin/${missing} is not installed`);

describe("workerd: MCP servers as providers", { skip: missing !== null }, () => {
  let mf: Miniflare;
  let scripted: ScriptedMcp;
  let memory: Bridge;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "tracefetch-mcp-workerd-"));
    [scripted, memory] = await Promise.all([
      startScriptedMcp(),
      memoryFile(dir).then((file) => startBridge("mcp-server-memory", { MEMORY_FILE_PATH: file })),
    ]);
    scripted.tool.answer = (args) => ({
      structuredContent: { hits: [{ t: `About ${args.q}`, u: "https://docs.example/w" }] },
    });
    mf = await startWorker({
      TRACEFETCH_ALLOW_LOOPBACK: "1",
      TRACEFETCH_DESCRIBE_PROVIDERS: "off",
      TRACEFETCH_MANIFEST: JSON.stringify(manifestOf([
        {
          name: "scripted",
          transport: "mcp",
          endpoint: scripted.endpoint,
          mcp: {
            tool: "find",
            arguments: { q: "{query}" },
            results: "hits",
            fields: { title: "t", locator: "u", snippet: "t" },
          },
        },
        { name: "memory", transport: "mcp", endpoint: memory.url, mcp: memoryMapping },
      ])),
    }, { quiet: true });
  });
  after(async () => {
    await mf?.dispose();
    await Promise.all([scripted?.close(), memory?.close()]);
    await rm(dir, { recursive: true, force: true });
  });

  it("a search fuses both servers' results, the session kept and reopened when forgotten", async () => {
    const first = assertEnvelope(
      await (await mf.dispatchFetch("http://gateway.test/v1/search?q=deadline")).json(),
    );
    assert.equal(first.code, "ok", JSON.stringify(first.result.candidates));
    const locators = first.result.merged.map((m: { locator: string }) => m.locator).sort();
    assert.deepEqual(locators, ["https://docs.example/w", "memory://Deadline budget"]);
    scripted.forget();
    const again = assertEnvelope(
      await (await mf.dispatchFetch("http://gateway.test/v1/search?q=budget")).json(),
    );
    assert.equal(again.code, "ok", JSON.stringify(again.result.candidates));
    assert.equal(scripted.sessionsOpened(), 2, "opened again after the server forgot");
    assert.equal(scripted.calls.at(-1)?.headers["mcp-session-id"], "s-2");
  });
});
