import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { answer, sleep, startServer, type TestServer } from "../support/servers.ts";
import { assertEnvelope, manifestOf } from "../support/gateway.ts";
import { startWorker } from "./miniflare.ts";

const HOLD_MS = 300;

describe("the Workers limit of six connections waiting for headers", () => {
  it("a seventh provider's request starts only when one of the first six has its headers", async () => {
    const arrived: number[] = [];
    const answeredAt: number[] = [];
    const servers: TestServer[] = [];
    for (let i = 0; i < 7; i++) {
      const name = `p${i}`;
      servers.push(
        await startServer(async (req, res, body) => {
          arrived.push(performance.now());
          await sleep(HOLD_MS);
          answeredAt.push(performance.now());
          await answer(name, name, [{ title: name, locator: `https://x.example/${name}` }])(
            req,
            res,
            body,
          );
        }),
      );
    }
    const mf = await startWorker({
      TRACEFETCH_ALLOW_LOOPBACK: "1",
      // Counts every request the providers get: no background describe.
      TRACEFETCH_DESCRIBE_PROVIDERS: "off",
      TRACEFETCH_MANIFEST: JSON.stringify(
        manifestOf(servers.map((s, i) => ({ name: `p${i}`, endpoint: s.url }))),
      ),
    });
    try {
      const res = await mf.dispatchFetch("http://gateway.test/v1/search?q=x");
      const body = assertEnvelope(await res.json());
      assert.equal(body.code, "ok");
      assert.equal(arrived.length, 7);
      const sorted = [...arrived].sort((a, b) => a - b);
      const firstAnswer = Math.min(...answeredAt);
      // The first six are in flight together: all arrived before any provider answered, however
      // long the isolate took to start. The seventh waits for the first headers.
      assert.ok(sorted[5]! < firstAnswer, "six requests start before any answer");
      assert.ok(
        sorted[6]! >= firstAnswer,
        "the seventh request started only after a provider answered",
      );
      // The queued attempt's latency includes its wait for a place.
      const latencies = body.result.candidates.map((c: { latency_ms: number }) => c.latency_ms)
        .sort((a: number, b: number) => a - b);
      assert.ok(
        latencies[6] >= 2 * HOLD_MS - 20,
        `the queued attempt shows its wait (${latencies[6]} ms)`,
      );
      assert.ok(latencies[0] < 2 * HOLD_MS - 20);
    } finally {
      await mf.dispose();
      for (const s of servers) await s.close();
    }
  });
});
