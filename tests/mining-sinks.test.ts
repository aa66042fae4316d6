/**
 * The sink cases (tests/support/mining-cases.ts) through the JSONL file and the webhook, on the
 * runtime running this file: Node under `node --test`, Deno under `deno test`. The file sink is
 * opened as the Node and Deno entries open it (src/runtime/launch.ts), then handed to the gateway.
 */
import { mkdirSync, readFileSync, rmdirSync, rmSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createGateway } from "../src/http/mod.ts";
import { readSettings } from "../src/config/mod.ts";
import type { Trace } from "../src/protocol/trace-schema.ts";
import type { TraceSink } from "../src/protocol/trace-sink.ts";
import { openTraceFile } from "../src/runtime/trace-file-sink.ts";
import { sinkCases } from "./support/mining-cases.ts";
import { startCollector, tracesOfBodies, tracesOfLines } from "./support/mining-fixture.ts";
import { runtimePorts, settingsFor } from "./support/gateway.ts";

const RUNTIME = "Deno" in globalThis ? "Deno" : "Node";

sinkCases({
  name: `${RUNTIME}, JSONL file`,
  breaks: ["fail"],
  async start(world, env) {
    const dir = await mkdtemp(join(tmpdir(), "tracefetch-traces-"));
    const path = join(dir, "traces.jsonl");
    const settings = { ...world.env, TRACEFETCH_TRACE_FILE: path, ...env };
    const file = await openTraceFile(path, readSettings(settings).env.mining.fileMaxBytes);
    // The recorder retries a failed batch in the background: the folder is removed only once no
    // append is under way and none can start, or one could create the file again mid-removal.
    let closed = false;
    const writing = new Set<Promise<void>>();
    const sink: TraceSink = {
      kind: file.kind,
      write(entries) {
        if (closed) return Promise.resolve();
        const written = file.write(entries);
        writing.add(written);
        const forget = () => void writing.delete(written);
        written.then(forget, forget);
        return written;
      },
    };
    const app = createGateway(settingsFor(world.manifest, settings), {
      ...runtimePorts,
      traceSink: sink,
    });
    /** Traces read before the file was taken away, when the sink was broken. */
    const kept: Trace[] = [];
    const inFile = () => {
      try {
        return tracesOfLines(readFileSync(path, "utf8"));
      } catch {
        return [];
      }
    };
    return {
      fetch: async (p, init) => await app.request(p, init),
      traces: () => Promise.resolve([...kept, ...inFile()]),
      // A folder where the file was: every append fails (EISDIR) until it is removed.
      breakSink: () => {
        kept.push(...inFile());
        rmSync(path);
        mkdirSync(path);
      },
      healSink: () => rmdirSync(path),
      close: async () => {
        closed = true;
        await Promise.allSettled([...writing]);
        await rm(dir, { recursive: true, force: true });
      },
    };
  },
});

sinkCases({
  name: `${RUNTIME}, webhook`,
  breaks: ["fail", "hang"],
  async start(world, env) {
    const collector = await startCollector();
    const webhookEnv = { ...world.env, TRACEFETCH_TRACE_WEBHOOK: collector.url, ...env };
    const app = createGateway(settingsFor(world.manifest, webhookEnv), runtimePorts);
    const jwks = await (await app.request("/.well-known/jwks.json")).json();
    return {
      fetch: async (p, init) => await app.request(p, init),
      traces: () => tracesOfBodies(collector.taken, jwks),
      breakSink: (mode) => {
        collector.mode = mode;
      },
      healSink: () => {
        collector.mode = "ok";
      },
      close: () => collector.close(),
    };
  },
});
