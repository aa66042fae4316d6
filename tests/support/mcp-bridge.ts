/**
 * Official stdio MCP servers served over Streamable HTTP by supergateway, on 127.0.0.1, as an
 * operator would put them in front of a gateway (docs/providers.md). Each bridge is a real process
 * with no network (no-network.cjs), ready once it answers initialize, stopped by its own pid.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "./daemon.ts";

const BIN = (name: string) =>
  fileURLToPath(new URL(`../../node_modules/.bin/${name}`, import.meta.url));
const NO_NETWORK = fileURLToPath(new URL("./no-network.cjs", import.meta.url));
/** How long a bridge may take to answer initialize: supergateway and a server start in ~1 s here. */
const READY_MS = 15_000;

export type Bridge = { url: string; close: () => Promise<void>; log: () => string };

/** Whether the bins a bridge needs are installed; a test skips with a line saying which is not. */
export function missingBin(...names: string[]): string | null {
  return names.find((n) => !existsSync(BIN(n))) ?? null;
}

/** supergateway in front of a stdio server (a bin in node_modules/.bin). */
export async function startBridge(
  server: string,
  env: Record<string, string> = {},
): Promise<Bridge> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    "node",
    [
      BIN("supergateway"),
      "--stdio",
      BIN(server),
      "--outputTransport",
      "streamableHttp",
      "--port",
      String(port),
    ],
    {
      env: { ...process.env, ...env, NODE_OPTIONS: `--require ${NO_NETWORK}` },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    },
  );
  const output: Buffer[] = [];
  child.stdout?.on("data", (c: Buffer) => output.push(c));
  child.stderr?.on("data", (c: Buffer) => output.push(c));
  const url = `http://127.0.0.1:${port}/mcp`;
  const log = () => Buffer.concat(output).toString("utf8");
  const close = async () => {
    if (child.exitCode !== null || child.pid === undefined) return;
    const exited = new Promise((r) => child.once("exit", r));
    // The group: supergateway and the stdio server it started.
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch { /* already gone */ }
    await Promise.race([exited, new Promise((r) => setTimeout(r, 2_000))]);
  };
  const until = Date.now() + READY_MS;
  while (Date.now() < until) {
    if (child.exitCode !== null) break;
    try {
      const res = await fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 0,
          method: "initialize",
          params: {
            protocolVersion: "2025-06-18",
            capabilities: {},
            clientInfo: { name: "ready", version: "0" },
          },
        }),
        signal: AbortSignal.timeout(5_000),
      });
      await res.text();
      if (res.ok) return { url, close, log };
    } catch { /* not listening yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  await close();
  throw new Error(`the bridge for ${server} did not start:\n${log()}`);
}

/** server-memory's search_nodes: entities with a name and observations, and no URL of their own. */
export const memoryMapping = {
  tool: "search_nodes",
  arguments: { query: "{query}" },
  results: "entities",
  fields: { title: "name", locator: "memory://{name}", snippet: "observations" },
};
/** The memory file server-memory reads: one entity whose name and observations match "deadline". */
export async function memoryFile(dir: string): Promise<string> {
  const file = join(dir, "memory.jsonl");
  await writeFile(
    file,
    [
      {
        type: "entity",
        name: "Deadline budget",
        entityType: "concept",
        observations: ["a deadline bounds every provider call", "set per search"],
      },
      { type: "entity", name: "Unrelated", entityType: "concept", observations: ["nothing"] },
    ].map((e) => JSON.stringify(e)).join("\n"),
  );
  return file;
}
