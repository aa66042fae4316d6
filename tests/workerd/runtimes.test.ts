import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { answer, startServer, type TestServer } from "../support/servers.ts";
import { assertEnvelope, manifestOf } from "../support/gateway.ts";
import { startWorker } from "./miniflare.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** Starts a runtime entry with PORT=0 and resolves with the URL it prints. */
function startEntry(
  command: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(command, args, {
    cwd: root,
    env: { ...process.env, ...env, PORT: "0" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`${command} did not start: ${out}`)), 30_000);
    const read = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1] as string, child });
      }
    };
    child.stdout!.on("data", read);
    child.stderr!.on("data", read);
    child.once("exit", (code) => reject(new Error(`${command} exited ${code}: ${out}`)));
  });
}

/**
 * Latencies, request ids and the gateway's own timing differ between runs; nothing else may. A
 * BM25 score is compared to 12 significant digits: each runtime's V8 may round Math.log's last bit
 * differently.
 */
function stable(envelope: unknown): unknown {
  return JSON.parse(
    JSON.stringify(
      envelope,
      (key, value) =>
        key === "latency_ms" || key === "request_id" || key === "total"
          ? 0
          : key === "score" && typeof value === "number"
          ? Number(value.toPrecision(12))
          : value,
    ),
  );
}

describe("the same search on Node, Deno and workerd", () => {
  let a: TestServer;
  let b: TestServer;
  const children: ChildProcess[] = [];
  let manifest: string;

  before(async () => {
    a = await startServer(answer("a", "a", [
      {
        title: "Shared deadline page",
        locator: "https://x.example/deadline",
        snippet: "about deadlines",
        metadata: { stars: 3 },
      },
      { title: "A's own", locator: "https://a.example/1", published_at: "2025-01-01" },
    ]));
    b = await startServer(answer("b", "b", [
      { title: "The same page", locator: "http://www.X.example/deadline/" },
      { title: "B's own", locator: "https://b.example/2" },
    ]));
    manifest = JSON.stringify(manifestOf([
      { name: "workspace", scope: "local" },
      { name: "a", endpoint: a.url, weight: 2 },
      { name: "b", endpoint: b.url },
    ]));
  });
  after(async () => {
    for (const child of children) child.kill("SIGKILL");
    await a.close();
    await b.close();
  });

  it("answers the same envelope, modulo latencies and request ids", async () => {
    const env = { TRACEFETCH_MANIFEST: manifest, TRACEFETCH_ALLOW_LOOPBACK: "1" };
    const path = "/v1/search?q=deadline&limit=5";
    const node = await startEntry(
      process.execPath,
      ["--import", "tsx", "src/runtime/node.ts"],
      env,
    );
    children.push(node.child);
    const deno = await startEntry("./node_modules/deno/deno", [
      "run",
      "--allow-net",
      "--allow-env",
      "--allow-read",
      "src/runtime/deno.ts",
    ], env);
    children.push(deno.child);
    const mf = await startWorker(env);
    try {
      const fromNode = assertEnvelope(await (await fetch(node.url + path)).json());
      const fromDeno = assertEnvelope(await (await fetch(deno.url + path)).json());
      const fromWorkerd = assertEnvelope(
        await (await mf.dispatchFetch("http://gateway.test" + path)).json(),
      );
      assert.equal(fromNode.code, "ok");
      assert.deepEqual(fromNode.result.decision.providers, ["workspace", "a", "b"]);
      assert.ok(
        fromNode.result.merged.some((m: { found_by: string[] }) => m.found_by.join() === "a,b"),
      );
      assert.deepEqual(stable(fromDeno), stable(fromNode));
      assert.deepEqual(stable(fromWorkerd), stable(fromNode));
    } finally {
      await mf.dispose();
    }
  });
});
