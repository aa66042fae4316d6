/**
 * The answer cache over Redis (docs/deploy.md, "The answer cache"): the adapter contract with two
 * instances over one redis-server the test starts, then two gateways in this process sharing it,
 * as two processes would. Without redis-server the suite is skipped in one line, or fails when
 * TRACEFETCH_REQUIRE_REDIS=1. Runs unchanged under Node and `deno test`.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Redis } from "ioredis";
import { RedisAnswerCache } from "../src/state/redis-cache.ts";
import { RedisStore } from "../src/state/redis-state.ts";
import { GuardedState } from "../src/state/guarded-state.ts";
import { parseRedisUrl } from "../src/state/redis-url.ts";
import { createGateway } from "../src/http/mod.ts";
import * as redisServer from "./support/redis-server.ts";
import { answerCacheContract } from "./support/answer-cache-contract.ts";
import {
  type AppPair,
  type CacheWorld,
  cacheWorld,
  failureNeverCached,
  privateStaysWithItsCaller,
  refreshDrops,
  repeatIsCached,
} from "./support/answer-cache-scenarios.ts";
import { manifestOf, runtimePorts, settingsFor } from "./support/gateway.ts";
import { sign } from "./support/auth-keys.ts";
import { ADMIN_SCOPE } from "../src/core/caller.ts";
import { STORE_RETRY_MS } from "../src/protocol/state-limits.ts";
import { StoreGuard } from "../src/state/store-guard.ts";

const required = process.env.TRACEFETCH_REQUIRE_REDIS === "1";
const missing = redisServer.redisServerPath() === null ? redisServer.REDIS_MISSING : null;
const SECRET = "a test secret of at least 32 bytes!";

function cacheOver(
  url: string,
  prefix: string,
  timeoutMs = 250,
  calls?: GuardedState,
): RedisAnswerCache {
  const now = () => performance.now();
  const target = parseRedisUrl(url)!;
  return new RedisAnswerCache({
    target,
    prefix,
    secret: SECRET,
    calls: calls ?? new StoreGuard({ timeoutMs, now }),
  });
}

if (missing !== null) {
  if (!required) console.log(`redis answer cache suite skipped: ${missing}`);
  describe("the answer cache over Redis", { skip: required ? false : missing }, () => {
    it("has a redis-server to run against (TRACEFETCH_REQUIRE_REDIS=1)", () => {
      assert.fail(`TRACEFETCH_REQUIRE_REDIS=1, but ${missing}`);
    });
  });
} else {
  describe("the answer cache over Redis", () => {
    let redis: redisServer.RedisServer;
    let client: Redis;
    const caches: RedisAnswerCache[] = [];
    const prefix = `tracefetch-test:${crypto.randomUUID()}:`;
    const states: GuardedState[] = [];
    const made = (timeoutMs?: number, calls?: GuardedState) => {
      const cache = cacheOver(redis.url, prefix, timeoutMs, calls);
      caches.push(cache);
      return cache;
    };
    let world: CacheWorld;
    let pair: AppPair;

    before(async () => {
      redis = await redisServer.startRedis();
      client = new Redis(redis.url);
      // The test stops Redis once: the reconnecting client's errors are expected then.
      client.on("error", () => {});
      world = await cacheWorld();
      const settings = settingsFor(manifestOf(world.entries), world.env, {
        describeProviders: false,
        allowLoopback: true,
      });
      // Each gateway's cache runs under its shared state's guard, as `npm start` makes them.
      const app = () => {
        const state = new GuardedState(new RedisStore(parseRedisUrl(redis.url)!, prefix), {
          timeoutMs: 250,
          secret: SECRET,
          now: () => performance.now(),
          wall: () => Date.now(),
        });
        states.push(state);
        return createGateway(settings, { ...runtimePorts, state, answerCache: made(250, state) });
      };
      pair = { a: app(), b: app() };
    });
    after(async () => {
      for (const cache of caches) await cache.close();
      for (const state of states) await state.close();
      client?.disconnect();
      await world?.close();
      await redis?.stop();
    });

    describe("RedisAnswerCache keeps the adapter contract", () => {
      answerCacheContract(() => ({ a: made(), b: made(), shares: true }));
    });

    it("a search repeated on the second gateway reaches the provider once and says cached", () =>
      repeatIsCached(pair, world));

    it("a failing answer is never served from the cache, on either gateway", () =>
      failureNeverCached(pair, world));

    it("a token provider's answer is never written to Redis, nor served to another sub or instance", async () => {
      const { elsewhere, contacts } = await privateStaysWithItsCaller(pair, world);
      assert.equal(elsewhere.result.candidates[0].cached, undefined, "not in the other's memory");
      assert.equal(contacts(), 4);
      const keys = await client.keys(`${prefix}*`);
      assert.deepEqual(keys.filter((k) => k.includes("{cache:secret}:answer:")), []);
      assert.ok(keys.some((k) => k.includes("{cache:open}:answer:")), "public answers are there");
    });

    it("a refresh on one gateway drops the provider's cached answers on the other", () =>
      refreshDrops(pair, world));

    it("every key the cache writes carries a TTL, and no key holds a query", async () => {
      const keys = await client.keys(`${prefix}{cache:*`);
      assert.ok(keys.length > 0);
      for (const key of keys) {
        const ttl = await client.pttl(key);
        assert.ok(ttl > 0, `${key}: ${ttl}`);
        assert.ok(!/repeat-|mine-|refresh-/.test(key), key);
      }
    });

    it("Redis stopped: a refresh answers 503 state_unavailable (action retry), never ok", async () => {
      const admin = await sign(world.caller, { sub: "ops", scope: ADMIN_SCOPE });
      const refresh = () =>
        pair.a.request("/v1/refresh", {
          method: "POST",
          headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
          body: JSON.stringify({ provider: "open" }),
        });
      await redis.stop();
      try {
        const res = await refresh();
        const body = await res.json();
        assert.equal(res.status, 503, JSON.stringify(body));
        assert.equal(body.code, "state_unavailable");
        assert.equal(body.action, "retry");
        assert.equal(body.retryable, true);
        assert.equal(body.error.field, "provider");
        assert.ok(body.retry_after_ms > 0);
        // The cache's trouble is the shared state's: one entry, one count.
        const status = await (await pair.a.request("/v1/status")).json();
        const shared = status.result.shared_state;
        assert.equal(shared.backend, "redis");
        assert.equal(shared.state, "degraded");
        assert.ok(shared.fallbacks >= 1, JSON.stringify(shared));
        assert.ok(!/127\.0\.0\.1|redis:/.test(shared.reason), shared.reason);
        // /v1/doctor shows the same one entry.
        const doctor = await (await pair.a.request("/v1/doctor")).json();
        assert.equal(doctor.result.shared_state.state, "degraded");
        assert.equal(doctor.result.shared_state.reason, shared.reason);
        assert.ok(doctor.result.shared_state.fallbacks >= shared.fallbacks);
      } finally {
        await redis.restart();
      }
      await new Promise((resolve) => setTimeout(resolve, STORE_RETRY_MS + 100));
      assert.equal((await refresh()).status, 200, "once the store is back, the refresh is done");
    });

    it("under the state's guard, the cache's failures are the state's: one count, one status, one back-off", async () => {
      const state = new GuardedState(new RedisStore(parseRedisUrl(redis.url)!, prefix), {
        timeoutMs: 250,
        secret: SECRET,
        now: () => performance.now(),
        wall: () => Date.now(),
      });
      states.push(state);
      const cache = made(250, state);
      assert.notEqual((await cache.lookup("open", "guarded")).generation, null);
      assert.deepEqual(state.status(), { backend: "redis", state: "ok", fallbacks: 0 });
      await redis.stop();
      try {
        assert.deepEqual(await cache.lookup("open", "guarded"), {
          generation: null,
          found: null,
        });
        assert.equal(await cache.invalidate("open"), false);
        const down = state.status();
        assert.equal(down.state, "degraded");
        assert.equal(down.fallbacks, 2, "the lookup and the invalidation, nothing else");
        // Left alone now: a state operation is answered from memory without trying the store.
        await state.leaseProbe("health", "open", 1_000);
        assert.equal(state.status().fallbacks, 3);
      } finally {
        await redis.restart();
      }
    });

    it("Redis stopped: a lookup is a miss within the timeout and a store does nothing", async () => {
      const cache = made(100);
      await redis.stop();
      const started = performance.now();
      const lookup = await cache.lookup("open", "id");
      assert.deepEqual(lookup, { generation: null, found: null });
      await cache.store("open", "id", lookup, "text", 60_000);
      assert.ok(performance.now() - started < 1_000);
      await redis.restart();
    });
  });
}
