/**
 * A fetch is recorded in the search traces (docs/security.md, "Search traces"): its host always,
 * its URL only as an HMAC unless TRACEFETCH_TRACE_RAW_LOCATORS, never its text; a cached fetch and
 * a refused one are recorded too, and the batch still validates as trace-batch.json says.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import * as v from "valibot";
import { FetchTraceSchema, TRACE_BATCH_VERSION, TraceBatchSchema } from "../src/protocol/mod.ts";
import type { TraceEntry, TraceSink } from "../src/protocol/trace-sink.ts";
import { evidenceGateway, startSite } from "./support/evidence-gateway.ts";

const MINING = {
  TRACEFETCH_MINING_CONFIRMED: "1",
  TRACEFETCH_TRACE_SECRET: "a trace secret of at least 32 bytes!",
  TRACEFETCH_TRACE_FILE: "unused",
};

function sink(): { sink: TraceSink; entries: TraceEntry[] } {
  const entries: TraceEntry[] = [];
  return {
    entries,
    sink: {
      kind: "file",
      write: (batch) => {
        entries.push(...batch);
        return Promise.resolve();
      },
    },
  };
}

async function until(entries: TraceEntry[], count: number): Promise<void> {
  const deadline = performance.now() + 2_000;
  while (entries.length < count && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("fetch traces", () => {
  let site: Awaited<ReturnType<typeof startSite>>;
  before(async () => {
    site = await startSite();
  });
  after(() => site.close());

  it("record the host and the URL's HMAC, never the path or the text; cached and refused fetches too", async () => {
    const { sink: traceSink, entries } = sink();
    const gw = await evidenceGateway({ env: MINING, ports: { traceSink } });
    try {
      const url = `${site.base}/article`;
      const ask = async (body: unknown) => {
        const res = await gw.app.request("/v1/fetch", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        });
        return await res.json();
      };
      await ask({ url });
      await until(entries, 1);
      await ask({ url });
      await until(entries, 2);
      await ask({ url: "http://127.0.0.2/secret-path" });
      await until(entries, 3);
      assert.equal(entries.length, 3);
      const traces = entries.map((e) => v.parse(FetchTraceSchema, e.trace));
      assert.deepEqual(
        traces.map((t) => [t.fetch.host, t.fetch.code, t.fetch.cached]),
        [["127.0.0.1", "ok", false], ["127.0.0.1", "ok", true], [
          "127.0.0.2",
          "url_forbidden",
          false,
        ]],
      );
      assert.equal(traces[0]?.fetch.status_code, 200);
      for (const entry of entries) {
        assert.ok(
          !entry.json.includes("/article") && !entry.json.includes("secret-path"),
          entry.json,
        );
        assert.ok(!entry.json.includes("Spring tides"), entry.json);
        assert.equal(
          typeof (entry.trace as { fetch: { url_hmac?: string } }).fetch.url_hmac,
          "string",
        );
      }
      const batch = { schema_version: TRACE_BATCH_VERSION, traces: entries.map((e) => e.trace) };
      assert.ok(v.safeParse(TraceBatchSchema, batch).success);
    } finally {
      await gw.close();
    }
  });

  it("keep the URL in the clear with TRACEFETCH_TRACE_RAW_LOCATORS", async () => {
    const { sink: traceSink, entries } = sink();
    const gw = await evidenceGateway({
      env: { ...MINING, TRACEFETCH_TRACE_RAW_LOCATORS: "1" },
      ports: { traceSink },
    });
    try {
      await gw.app.request(`/v1/fetch?url=${encodeURIComponent(`${site.base}/article`)}`);
      await until(entries, 1);
      const trace = v.parse(FetchTraceSchema, entries[0]?.trace);
      assert.equal(trace.fetch.url, `${site.base}/article`);
      assert.equal(trace.fetch.url_hmac, undefined);
    } finally {
      await gw.close();
    }
  });
});
