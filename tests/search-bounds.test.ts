/**
 * Bounds of one search and of the gateway instance (docs/protocol.md, docs/envelope.md): the provider cap, the search's
 * byte budget, the in-flight limit, per-provider concurrency, and the wall time a search may take.
 * One node:http server plays many providers, routed by path (/p0, /p1, ...).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { gateway, type ProviderEntry, search } from "./support/gateway.ts";
import { answer, type Handler, sleep, startServer, type TestServer } from "./support/servers.ts";
import { until } from "./support/until.ts";

type Attempt = { provider: string; outcome: string; code: string; latency_ms: number };

/** A server where path /pN answers as provider "pN" (or as `override` decides). */
async function providerFarm(
  override: (index: number) => Handler | null = () => null,
): Promise<TestServer> {
  return await startServer((req, res, body) => {
    const index = Number(/^\/p(\d+)$/.exec(req.url ?? "")?.[1] ?? -1);
    const handler = override(index) ?? answer(`p${index}`, `p${index}`, [{
      title: `Result of p${index}`,
      locator: `https://farm.example/${index}`,
    }]);
    return handler(req, res, body);
  });
}

function farmEntries(server: TestServer, count: number, extra: Partial<ProviderEntry> = {}) {
  return Array.from({ length: count }, (_, i) => ({
    name: `p${i}`,
    endpoint: `http://127.0.0.1:${server.port}/p${i}`,
    ...extra,
  }));
}

describe("search bounds", () => {
  it("32 providers with 8 hanging (timeout 1 s) answer within the slowest timeout plus 100 ms", async () => {
    const hangs = (i: number) => i % 4 === 1;
    const farm = await providerFarm((i) => (hangs(i) ? () => {} : null));
    try {
      const app = gateway(farmEntries(farm, 32, { timeout_seconds: 1 }));
      // Warm the code path first: the bound is about deadlines, not a cold process's first JIT.
      assert.equal((await search(app, { providers: "p0" })).body.code, "ok");
      const started = performance.now();
      const { res, body } = await search(app, { limit: "100" });
      const elapsed = performance.now() - started;
      assert.equal(res.status, 200);
      assert.equal(body.code, "partial");
      assert.ok(elapsed < 1_100, `the search took ${elapsed.toFixed(0)} ms`);
      const attempts: Attempt[] = body.result.candidates;
      assert.equal(attempts.length, 32);
      const timedOut = attempts.filter((a) => a.outcome === "timeout").map((a) => a.provider);
      assert.deepEqual(
        timedOut,
        Array.from({ length: 32 }, (_, i) => i).filter(hangs).map((i) => `p${i}`),
      );
      assert.equal(attempts.filter((a) => a.outcome === "success").length, 24);
      assert.equal(body.result.merged.length, 24);
    } finally {
      await farm.close();
    }
  });

  it("40 selected providers: only 32 are contacted; 8 are skipped with reason provider_limit", async () => {
    const farm = await providerFarm();
    // Node warns on an AbortSignal with more than 10 listeners; 32 attempts must not trip it.
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on("warning", onWarning);
    try {
      const { res, body } = await search(gateway(farmEntries(farm, 40)), { limit: "100" });
      await sleep(10);
      assert.deepEqual(warnings, []);
      assert.equal(res.status, 200);
      assert.equal(body.code, "ok");
      assert.equal(farm.requests.length, 32);
      const contacted = Array.from({ length: 32 }, (_, i) => `/p${i}`);
      assert.deepEqual(farm.requests.map((r) => r.url).sort(), contacted.sort());
      assert.equal(body.result.candidates.length, 32);
      assert.equal(body.result.decision.providers.length, 32);
      assert.deepEqual(
        body.result.decision.skipped,
        Array.from({ length: 8 }, (_, i) => ({ provider: `p${32 + i}`, reason: "provider_limit" })),
      );
      assert.ok(
        body.result.warnings.includes("8 provider(s) not contacted: a search contacts at most 32"),
        JSON.stringify(body.result.warnings),
      );
    } finally {
      process.off("warning", onWarning);
      await farm.close();
    }
  });

  it("a search's byte budget: attempts that fit succeed, the next ones are search_budget_exceeded", async () => {
    // Five ~100 KB answers, 150 ms apart so they are read one after another.
    const big = (i: number): Handler => async (_req, res) => {
      await sleep(150 * i);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({
        schema_version: "tracefetch.provider-response.v1",
        provider: `p${i}`,
        scope: `p${i}`,
        candidates: [{
          title: "Big",
          locator: `https://big.example/${i}`,
          snippet: "b".repeat(1e5),
        }],
      }));
    };
    const farm = await providerFarm(big);
    try {
      const app = gateway(farmEntries(farm, 5), { settings: { searchBudgetBytes: 300_000 } });
      const { res, body } = await search(app);
      assert.equal(res.status, 200);
      assert.equal(body.code, "partial");
      const attempts = body.result.candidates;
      assert.deepEqual(
        attempts.map((a: Attempt & { retryable: boolean }) => [a.outcome, a.code, a.retryable]),
        [
          ["success", "ok", false],
          ["success", "ok", false],
          ["provider_protocol_error", "search_budget_exceeded", false],
          ["provider_protocol_error", "search_budget_exceeded", false],
          ["provider_protocol_error", "search_budget_exceeded", false],
        ],
      );
      assert.deepEqual(
        body.result.merged.map((m: { locator: string }) => m.locator),
        ["https://big.example/0", "https://big.example/1"],
      );
    } finally {
      await farm.close();
    }
  });

  it("beyond maxInflight searches, a search is shed with 429 overloaded and Retry-After; the others complete", async () => {
    const farm = await providerFarm(() => async (_req, res) => {
      await sleep(500);
      await answer("p0", "p0", [{ title: "Slow", locator: "https://slow.example/" }])(
        _req,
        res,
        "",
      );
    });
    try {
      const app = gateway(farmEntries(farm, 1), { settings: { maxInflight: 2 } });
      // Three different searches: identical ones would share one fan-out and one slot.
      const first = search(app, { q: "first" });
      const second = search(app, { q: "second" });
      await until(() => farm.requests.length === 2, "two searches in flight");
      const shed = await search(app, { q: "third" });
      assert.equal(shed.res.status, 429);
      assert.equal(shed.body.code, "overloaded");
      assert.equal(shed.body.exit_code, 3);
      assert.equal(shed.body.action, "retry");
      assert.equal(shed.body.retryable, true);
      assert.equal(shed.body.retry_after_ms, 1_000);
      assert.equal(shed.res.headers.get("retry-after"), "1");
      assert.equal("result" in shed.body, false);
      for (const done of await Promise.all([first, second])) {
        assert.equal(done.res.status, 200);
        assert.equal(done.body.code, "ok");
      }
      assert.equal(farm.requests.length, 2, "the shed search contacted no provider");
    } finally {
      await farm.close();
    }
  });

  it("a refused request contacts no provider", async () => {
    const farm = await providerFarm();
    try {
      const app = gateway(farmEntries(farm, 3));
      const refused: Array<[Record<string, string>, number, string]> = [
        [{ limit: "0" }, 400, "limit_out_of_range"],
        [{ limit: "101" }, 400, "limit_out_of_range"],
        [{ timeout_ms: "0" }, 400, "timeout_out_of_range"],
        [{ providers: "p0,nobody" }, 400, "unknown_provider"],
        [{ scope: "nowhere" }, 400, "unknown_scope"],
      ];
      for (const [params, status, code] of refused) {
        const { res, body } = await search(app, params);
        assert.deepEqual([res.status, body.code], [status, code], JSON.stringify(params));
      }
      await sleep(20);
      assert.equal(farm.requests.length, 0);
    } finally {
      await farm.close();
    }
  });

  it("max_concurrency 1: the provider never sees two requests at once, and queued time counts in latency_ms", async () => {
    let active = 0;
    let most = 0;
    const farm = await providerFarm(() => async (req, res, body) => {
      active++;
      most = Math.max(most, active);
      await sleep(300);
      active--;
      await answer("p0", "p0", [{ title: "One", locator: "https://one.example/" }])(req, res, body);
    });
    try {
      const app = gateway(farmEntries(farm, 1, { max_concurrency: 1 }));
      // Two different searches: identical ones would share one request.
      const runs = await Promise.all([search(app, { q: "one" }), search(app, { q: "two" })]);
      assert.equal(farm.requests.length, 2);
      assert.equal(most, 1);
      const latencies = runs
        .map(({ body }) => {
          assert.equal(body.code, "ok");
          return (body.result.candidates[0] as Attempt).latency_ms;
        })
        .sort((a, b) => a - b);
      const [firstMs, secondMs] = latencies as [number, number];
      assert.ok(firstMs >= 295 && firstMs < 550, `first latency_ms ${firstMs}`);
      assert.ok(secondMs >= 595 && secondMs < 900, `queued latency_ms ${secondMs}`);
    } finally {
      await farm.close();
    }
  });
});
