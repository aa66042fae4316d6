/**
 * The shared state and the answer cache over a Redis Cluster (docs/deploy.md, "Shared state"): a
 * 3-node cluster of Debian's redis-server the test starts on loopback, reached through
 * `redis+cluster://` seed nodes. The shared-state and answer-cache contracts run over it, then two
 * gateways in this process sharing it go through the two-instance scenarios: a provider failing
 * every time is contacted at most 6 times in 10 alternating searches, 50 identical searches reach
 * the provider once, a repeated search is served from the cache, `searches_per_minute: 20` lets 20
 * of 60 through, and `/v1/status` says `ok` with no fallback throughout: no script touches keys of
 * two slots. Without redis-server the suite is skipped in one line, or fails when
 * TRACEFETCH_REQUIRE_REDIS=1. Runs unchanged under Node and `deno test`.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createGateway } from "../src/http/mod.ts";
import { GuardedState } from "../src/state/guarded-state.ts";
import { RedisStore } from "../src/state/redis-state.ts";
import { RedisAnswerCache } from "../src/state/redis-cache.ts";
import { parseRedisUrl, type RedisTarget } from "../src/state/redis-url.ts";
import * as redisServer from "./support/redis-server.ts";
import { stateContract } from "./support/state-contract.ts";
import { answerCacheContract } from "./support/answer-cache-contract.ts";
import { manifestOf, runtimePorts, settingsFor } from "./support/gateway.ts";
import {
  alternatingFailures,
  assertNoFallbacks,
  callerLimitBurst,
  identicalBurst,
  type Instance,
  type Pair,
  type ScenarioProviders,
  scenarioProviders,
  SEARCHES_PER_MINUTE,
  searchesAt,
} from "./support/shared-state-scenarios.ts";
import { cachedProvider } from "./support/answer-cache-scenarios.ts";
import { startServer, type TestServer } from "./support/servers.ts";
import { launch } from "../src/runtime/launch.ts";
import { listen } from "../src/runtime/node-listen.ts";
import { readSettings } from "../src/config/settings.ts";
import { StoreGuard } from "../src/state/store-guard.ts";

const required = process.env.TRACEFETCH_REQUIRE_REDIS === "1";
const missing = redisServer.redisServerPath() === null ? redisServer.REDIS_MISSING : null;
const SECRET = "a test secret of at least 32 bytes!";
/** The store's timeout here: above a busy machine's slowest round trip, so nothing falls back. */
const TIMEOUT_MS = 1_000;
const clocks = { now: () => performance.now(), wall: () => Date.now() };
const freshPrefix = () => `tracefetch-test:${crypto.randomUUID()}:`;

if (missing !== null) {
  if (!required) console.log(`redis cluster suite skipped: ${missing}`);
  describe("shared state over a Redis Cluster", { skip: required ? false : missing }, () => {
    it("has a redis-server to run against (TRACEFETCH_REQUIRE_REDIS=1)", () => {
      assert.fail(`TRACEFETCH_REQUIRE_REDIS=1, but ${missing}`);
    });
  });
} else {
  describe("shared state over a Redis Cluster", () => {
    let cluster: redisServer.RedisCluster;
    let target: RedisTarget;
    const closing: Array<() => Promise<void>> = [];

    const stateOver = (prefix: string) => {
      const state = new GuardedState(new RedisStore(target, prefix), {
        ...clocks,
        timeoutMs: TIMEOUT_MS,
        secret: SECRET,
      });
      closing.push(() => state.close());
      return state;
    };
    const cacheOver = (prefix: string) => {
      const cache = new RedisAnswerCache({
        target,
        prefix,
        secret: SECRET,
        calls: new StoreGuard({ timeoutMs: TIMEOUT_MS, now: clocks.now }),
      });
      closing.push(() => cache.close());
      return cache;
    };

    before(async () => {
      cluster = await redisServer.startRedisCluster();
      target = parseRedisUrl(cluster.url)!;
      assert.equal(target.kind, "cluster");
    });
    after(async () => {
      for (const close of closing) await close();
      await cluster?.stop();
    });

    stateContract({
      name: "a 3-node Redis Cluster, two connections",
      shared: true,
      make: () => {
        const prefix = freshPrefix();
        return Promise.resolve({
          a: stateOver(prefix),
          b: stateOver(prefix),
          fresh: () => stateOver(prefix),
          close: () => Promise.resolve(),
        });
      },
    });

    describe("the answer cache over the cluster keeps the adapter contract", () => {
      const prefix = freshPrefix();
      answerCacheContract(() => ({ a: cacheOver(prefix), b: cacheOver(prefix), shares: true }));
    });

    describe("two gateways over the cluster", () => {
      let providers: ScenarioProviders;
      let cached: TestServer;
      let entries: Array<Record<string, unknown> & { name: string }>;
      let pair: Pair;

      /** Two gateways over one prefix of the cluster, as two instances of one deployment. */
      function pairOver(manifest: Record<string, unknown>): Pair {
        const prefix = freshPrefix();
        const settings = settingsFor(manifest, {}, {
          describeProviders: false,
          allowLoopback: true,
        });
        const [a, b] = [0, 1].map((): Instance => {
          const app = createGateway(settings, {
            ...runtimePorts,
            state: stateOver(prefix),
            answerCache: cacheOver(prefix),
          });
          return (path, init) => Promise.resolve(app.request(path, init));
        }) as [Instance, Instance];
        return { a, b };
      }

      before(async () => {
        const started = await scenarioProviders();
        providers = started.providers;
        cached = await startServer(cachedProvider("cached"));
        entries = [...started.entries, {
          name: "cached",
          endpoint: cached.url,
          cache_ttl_seconds: 60,
        }];
        pair = pairOver(manifestOf(entries));
      });
      after(async () => {
        for (const server of Object.values(providers ?? {})) await server.close();
        await cached?.close();
      });

      it("a provider failing every time is contacted at most 6 times in 10 alternating searches", async () => {
        const contacts = await alternatingFailures(pair, providers.failing);
        assert.ok(contacts >= 5 && contacts <= 6, `contacted ${contacts} times`);
        await assertNoFallbacks(pair, "redis");
      });

      it("50 identical concurrent searches split across both reach the provider once", async () => {
        assert.equal(await identicalBurst(pair, providers.slow), 1);
        await assertNoFallbacks(pair, "redis");
      });

      it("a search repeated with cache_ttl_seconds reaches the provider once and says cached", async () => {
        const path = "/v1/search?q=cached&providers=cached";
        const first = await (await pair.a(path)).json();
        assert.equal(first.result.candidates[0].cached, undefined);
        // A's write runs after its answer: time for it to land on a machine running every suite.
        await new Promise((resolve) => setTimeout(resolve, 250));
        const second = await (await pair.b(path)).json();
        assert.equal(second.result.candidates[0].cached, true);
        assert.equal(searchesAt(cached), 1);
        await assertNoFallbacks(pair, "redis");
      });

      it("the root takes a redis+cluster:// URL from the environment: a search, and status says ok", async () => {
        const served = await launch(
          readSettings({
            PORT: "0",
            HOST: "127.0.0.1",
            TRACEFETCH_MANIFEST: JSON.stringify(manifestOf(entries)),
            TRACEFETCH_ALLOW_LOOPBACK: "1",
            TRACEFETCH_DESCRIBE_PROVIDERS: "0",
            TRACEFETCH_API_DOCS: "0",
            TRACEFETCH_STATE_URL: cluster.url,
            TRACEFETCH_STATE_SECRET: SECRET,
            TRACEFETCH_STATE_PREFIX: freshPrefix(),
          }),
          listen,
        );
        try {
          const res = await fetch(`${served.url}/v1/search?q=launched&providers=slow`);
          assert.equal((await res.json()).code, "ok");
          const status = await (await fetch(`${served.url}/v1/status`)).json();
          assert.deepEqual(status.result.shared_state, {
            backend: "redis",
            state: "ok",
            fallbacks: 0,
          });
        } finally {
          await served.close();
        }
      });

      it(`caller_limits.searches_per_minute: ${SEARCHES_PER_MINUTE} lets exactly 20 of 60 through`, async () => {
        const limited = pairOver(
          manifestOf(entries, { caller_limits: { searches_per_minute: SEARCHES_PER_MINUTE } }),
        );
        assert.deepEqual(await callerLimitBurst(limited, "slow"), { passed: 20, refused: 40 });
        await assertNoFallbacks(limited, "redis");
        await assertNoFallbacks(pair, "redis");
      });
    });
  });
}
