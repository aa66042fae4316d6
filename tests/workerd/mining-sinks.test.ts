/**
 * The sink cases (tests/support/mining-cases.ts) in workerd, through the bundled worker as
 * deployed: a Workers Queue (Miniflare's, read by a consumer worker that hands each batch to a
 * collector on 127.0.0.1) and the webhook. A Queue cannot be made to fail from here, so the
 * failing and hanging cases run through the webhook. Then the bindings the worker refuses.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Miniflare } from "miniflare";
import * as v from "valibot";
import { bundleWorker, type WorkerModule } from "../../scripts/build-worker.ts";
import { TraceSchema } from "../../src/protocol/trace-schema.ts";
import { sinkCases } from "../support/mining-cases.ts";
import { startCollector, tracesOfBodies } from "../support/mining-fixture.ts";
import { assertEnvelope } from "../support/gateway.ts";
import { startWorker } from "./miniflare.ts";

let built: Promise<WorkerModule[]> | null = null;

/** The consumer: every batch it receives goes to the collector as one JSON array of bodies. */
const CONSUMER = `export default {
  async queue(batch, env) {
    const res = await fetch(env.COLLECTOR, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(batch.messages.map((m) => m.body)),
    });
    if (!res.ok) throw new Error("collector refused the batch");
  },
};`;

/** The gateway worker with a Queue producer bound as TRACES, and the consumer beside it. */
async function startWithQueue(bindings: Record<string, string>, collector: string) {
  built ??= bundleWorker({ withCorpus: true });
  const modules = await built;
  const mf = new Miniflare({
    workers: [
      {
        name: "gateway",
        modules: modules.map((m) => ({
          type: "ESModule" as const,
          path: m.path,
          contents: m.code,
        })),
        compatibilityDate: "2026-04-26",
        compatibilityFlags: ["enable_request_signal"],
        bindings,
        queueProducers: { TRACES: "tracefetch-traces" },
      },
      {
        name: "consumer",
        modules: true,
        script: CONSUMER,
        compatibilityDate: "2026-04-26",
        bindings: { COLLECTOR: collector },
        queueConsumers: { "tracefetch-traces": { maxBatchSize: 100, maxBatchTimeout: 0.1 } },
      },
    ],
  });
  await mf.ready;
  return mf;
}

const dispatch = (mf: Miniflare) => async (path: string, init?: RequestInit) =>
  (await mf.dispatchFetch(`http://gateway.test${path}`, init as never)) as unknown as Response;

sinkCases({
  name: "workerd, Queue",
  breaks: [],
  async start(world, env) {
    const collector = await startCollector();
    const mf = await startWithQueue({
      ...world.env,
      TRACEFETCH_MANIFEST: JSON.stringify(world.manifest),
      TRACEFETCH_TRACE_QUEUE: "TRACES",
      ...env,
    }, collector.url);
    return {
      fetch: dispatch(mf),
      traces: () =>
        Promise.resolve(
          collector.taken.flatMap((body) =>
            (JSON.parse(body) as unknown[]).map((t) => v.parse(TraceSchema, t))
          ),
        ),
      close: async () => {
        await mf.dispose();
        await collector.close();
      },
    };
  },
});

sinkCases({
  name: "workerd, webhook",
  breaks: ["fail", "hang"],
  async start(world, env) {
    const collector = await startCollector();
    const mf = await startWorker({
      ...world.env,
      TRACEFETCH_MANIFEST: JSON.stringify(world.manifest),
      TRACEFETCH_TRACE_WEBHOOK: collector.url,
      ...env,
    }, { quiet: true });
    const fetch = dispatch(mf);
    const jwks = await (await fetch("/.well-known/jwks.json")).json();
    return {
      fetch,
      traces: () => tracesOfBodies(collector.taken, jwks),
      breakSink: (mode) => {
        collector.mode = mode;
      },
      healSink: () => {
        collector.mode = "ok";
      },
      close: async () => {
        await mf.dispose();
        await collector.close();
      },
    };
  },
});

describe("the trace bindings a worker refuses: every request is a 500 naming the variable", () => {
  const workers: Miniflare[] = [];
  const manifest = JSON.stringify({
    schema_version: "tracefetch.providers.v1",
    providers: [{ name: "a", scope: "a", endpoint: "https://a.example/search" }],
  });
  after(async () => {
    for (const mf of workers) await mf.dispose();
  });

  const cases: Array<[string, Record<string, string>, RegExp]> = [
    [
      "a Queue binding that does not exist",
      { TRACEFETCH_TRACE_QUEUE: "MISSING", TRACEFETCH_TRACE_SECRET: "s".repeat(32) },
      /TRACEFETCH_TRACE_QUEUE names "MISSING", but this Worker has no Queue binding/,
    ],
    [
      "a trace file",
      { TRACEFETCH_TRACE_FILE: "traces.jsonl", TRACEFETCH_TRACE_SECRET: "s".repeat(32) },
      /TRACEFETCH_TRACE_FILE is set, but this runtime writes no files/,
    ],
    [
      "a sink without the HMAC secret",
      { TRACEFETCH_TRACE_WEBHOOK: "https://collector.example/traces" },
      /needs TRACEFETCH_TRACE_SECRET/,
    ],
  ];
  for (const [what, bindings, message] of cases) {
    it(what, async () => {
      const mf = await startWorker({ TRACEFETCH_MANIFEST: manifest, ...bindings }, { quiet: true });
      workers.push(mf);
      for (const path of ["/v1/status", "/v1/search?q=a"]) {
        const res = await mf.dispatchFetch(`http://gateway.test${path}`);
        const body = assertEnvelope(await res.json());
        assert.equal(res.status, 500);
        assert.equal(body.code, "internal_error");
        assert.match(body.error.message, message);
      }
    });
  }
});
