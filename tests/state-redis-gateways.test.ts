/**
 * Two gateway processes over one Redis, as an operator runs them (`npm start` twice, or the Deno
 * entry twice, with TRACEFETCH_STATE_URL): the shared-state scenarios (tests/support/
 * shared-state-scenarios.ts) against a real redis-server the test starts on a free loopback port,
 * then Redis stopped (every search still answers, status degraded) and back (ok, no restart).
 * Without redis-server the suite is skipped in one line, or fails when TRACEFETCH_REQUIRE_REDIS=1.
 * It starts both runtimes itself, so the test suite runs it under Node only
 * (scripts/run-tests.ts, CHILD_PROCESSES_ONLY).
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { STORE_RETRY_MS } from "../src/protocol/state-limits.ts";
import * as redisServer from "./support/redis-server.ts";
import { manifestOf } from "./support/gateway.ts";
import {
  alternatingFailures,
  assertNoFallbacks,
  callerLimitBurst,
  identicalBurst,
  type Instance,
  type Pair,
  probesAfterSuspension,
  type ScenarioProviders,
  scenarioProviders,
  SEARCHES_PER_MINUTE,
  sharedStateOf,
} from "./support/shared-state-scenarios.ts";
import { cachedProvider, searchesAt } from "./support/answer-cache-scenarios.ts";
import { startServer, type TestServer } from "./support/servers.ts";

/**
 * The store's timeout in these runs: they test sharing, not the timeout (its own tests and bench
 * scenario 6 do), and on a machine running every suite at once a Redis call has taken over the
 * default 250 ms, which falls back and fails "no operation fell back".
 */
const STATE_TIMEOUT_MS = 2_000;

const root = fileURLToPath(new URL("..", import.meta.url));
const required = process.env.TRACEFETCH_REQUIRE_REDIS === "1";
const missing = redisServer.redisServerPath() === null ? redisServer.REDIS_MISSING : null;
/** How long a gateway process may take to say where it listens (Deno compiles on first run). */
const START_MS = 60_000;

type Runtime = { name: string; command: string; args: string[] };
const RUNTIMES: Runtime[] = [
  // "node", not process.execPath: under `deno test` that is deno.
  { name: "Node", command: "node", args: ["--import", "tsx", "src/runtime/node.ts"] },
  {
    name: "Deno",
    command: "./node_modules/deno/deno",
    args: [
      "run",
      "--allow-net",
      "--allow-env",
      "--allow-read",
      "--allow-sys",
      "src/runtime/deno.ts",
    ],
  },
];

type Gateway = { url: string; stop: () => Promise<void> };

/** Starts one gateway process and waits for its "listening on" line. */
function startGateway(runtime: Runtime, env: Record<string, string>): Promise<Gateway> {
  const child: ChildProcess = spawn(runtime.command, runtime.args, {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", NO_COLOR: "1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`${runtime.name} gateway did not start: ${output}`));
    }, START_MS);
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      const url = /listening on (http:\/\/\S+)/.exec(output)?.[1];
      if (url !== undefined) {
        clearTimeout(timer);
        resolve({ url, stop });
      }
    };
    child.stdout?.on("data", read);
    child.stderr?.on("data", read);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${runtime.name} gateway exited (${code}): ${output}`));
    });
  });
}

const instanceAt = (url: string): Instance => (path, init) => fetch(`${url}${path}`, init);

if (missing !== null) {
  if (!required) console.log(`redis gateways suite skipped: ${missing}`);
  describe("two gateway processes over one Redis", { skip: required ? false : missing }, () => {
    it("has a redis-server to run against (TRACEFETCH_REQUIRE_REDIS=1)", () => {
      assert.fail(`TRACEFETCH_REQUIRE_REDIS=1, but ${missing}`);
    });
  });
} else {
  for (const runtime of RUNTIMES) {
    describe(`two ${runtime.name} gateways over one Redis`, () => {
      let redis: redisServer.RedisServer;
      let providers: ScenarioProviders;
      /** A public provider whose answers are cached for a minute (docs/envelope.md). */
      let cached: TestServer;
      let gateways: Gateway[] = [];
      let pair: Pair;
      let env: Record<string, string>;
      let entries: Awaited<ReturnType<typeof scenarioProviders>>["entries"];

      before(async () => {
        redis = await redisServer.startRedis();
        const started = await scenarioProviders();
        providers = started.providers;
        cached = await startServer(cachedProvider("cached"));
        entries = [...started.entries, { name: "cached", endpoint: cached.url }];
        env = {
          PORT: "0",
          TRACEFETCH_MANIFEST: JSON.stringify(
            manifestOf(
              entries.map((e) => e.name === "cached" ? { ...e, cache_ttl_seconds: 60 } : e),
            ),
          ),
          TRACEFETCH_ALLOW_LOOPBACK: "1",
          TRACEFETCH_DESCRIBE_PROVIDERS: "0",
          TRACEFETCH_API_DOCS: "0",
          TRACEFETCH_STATE_URL: redis.url,
          TRACEFETCH_STATE_SECRET: "a test secret of at least 32 bytes!",
          TRACEFETCH_STATE_PREFIX: `tracefetch-test:${crypto.randomUUID()}:`,
          TRACEFETCH_STATE_TIMEOUT_MS: String(STATE_TIMEOUT_MS),
        };
        gateways = await Promise.all([startGateway(runtime, env), startGateway(runtime, env)]);
        const [a, b] = gateways.map((g) => instanceAt(g.url));
        pair = { a: a as Instance, b: b as Instance };
      });
      after(async () => {
        for (const gateway of gateways) await gateway.stop();
        for (const server of Object.values(providers ?? {})) await server.close();
        await cached?.close();
        await redis?.stop();
      });

      it("a provider failing every time is contacted at most 6 times in 10 alternating searches", async () => {
        const contacts = await alternatingFailures(pair, providers.failing);
        assert.ok(contacts >= 5 && contacts <= 6, `contacted ${contacts} times`);
      });

      it("once a suspension is over, 50 concurrent searches across both send exactly one probe", async () => {
        assert.equal(await probesAfterSuspension(pair, providers.waiting), 1);
      });

      it("50 identical concurrent searches split across both reach the provider once", async () => {
        assert.equal(await identicalBurst(pair, providers.slow), 1);
      });

      it(`caller_limits.searches_per_minute: ${SEARCHES_PER_MINUTE}: 60 distinct searches across two more gateways let exactly 20 through, 40 refused 429`, async () => {
        const limited = {
          ...env,
          TRACEFETCH_MANIFEST: JSON.stringify(
            manifestOf(entries, { caller_limits: { searches_per_minute: SEARCHES_PER_MINUTE } }),
          ),
        };
        const two = await Promise.all([
          startGateway(runtime, limited),
          startGateway(runtime, limited),
        ]);
        try {
          const [a, b] = two.map((g) => instanceAt(g.url)) as [Instance, Instance];
          assert.deepEqual(await callerLimitBurst({ a, b }, "slow"), { passed: 20, refused: 40 });
        } finally {
          for (const gateway of two) await gateway.stop();
        }
      });

      it("a search repeated on the second gateway is answered from the cache in Redis", async () => {
        const path = "/v1/search?q=cached&providers=cached";
        const first = await (await pair.a(path)).json();
        assert.equal(first.result.candidates[0].cached, undefined);
        // A's write runs after its answer: time for it to land on a machine running every suite.
        await new Promise((resolve) => setTimeout(resolve, 250));
        const second = await (await pair.b(path)).json();
        assert.equal(second.result.candidates[0].cached, true);
        assert.equal(searchesAt(cached), 1);
        await (await pair.b(`${path}&max_age_seconds=0`)).json();
        assert.equal(searchesAt(cached), 2);
      });

      it("no operation fell back to memory in these runs", async () => {
        await assertNoFallbacks(pair, "redis");
      });

      it("Redis stopped: both answer searches ok and say degraded; Redis back: ok without a restart", async () => {
        await redis.stop();
        for (const [i, instance] of [pair.a, pair.b].entries()) {
          const res = await instance(`/v1/search?q=outage${i}&providers=slow`);
          assert.equal(res.status, 200);
          assert.equal((await res.json()).code, "ok");
          const status = await sharedStateOf(instance);
          assert.equal(status.state, "degraded");
          assert.ok(status.reason !== undefined && !/127\.0\.0\.1|redis:/.test(status.reason));
        }
        await redis.restart();
        await new Promise((resolve) => setTimeout(resolve, STORE_RETRY_MS + 200));
        for (const [i, instance] of [pair.a, pair.b].entries()) {
          const res = await instance(`/v1/search?q=back${i}&providers=slow`);
          assert.equal(res.status, 200);
          assert.equal((await sharedStateOf(instance)).state, "ok");
        }
      });
    });
  }
}
