/**
 * What a search waits for of a shared Redis (docs/deploy.md, "Shared state"): its calls before the
 * providers go out as one round trip, the caller's `timeout_ms` bounds them, and a store that
 * comes back counts a burst's searches itself; a cache in a Redis of its own, with no shared
 * state, is under the same one guard. Gateways in this process over a real redis-server on
 * loopback, behind a TCP proxy that holds what they send (tests/support/delay-proxy.ts).
 * Without redis-server the suite is skipped in one line, or fails when TRACEFETCH_REQUIRE_REDIS=1.
 * Runs unchanged under Node and `deno test`.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { createGateway } from "../src/http/mod.ts";
import { GuardedState } from "../src/state/guarded-state.ts";
import { RedisStore } from "../src/state/redis-state.ts";
import { RedisAnswerCache } from "../src/state/redis-cache.ts";
import { parseRedisUrl } from "../src/state/redis-url.ts";
import { STORE_RETRY_MS } from "../src/protocol/state-limits.ts";
import { REDIS_RECONNECT_MAX_MS } from "../src/protocol/state-limits.ts";
import * as redisServer from "./support/redis-server.ts";
import { launch } from "../src/runtime/launch.ts";
import { listen } from "../src/runtime/node-listen.ts";
import { readSettings } from "../src/config/settings.ts";
import { type DelayProxy, roundTrips, startDelayProxy } from "./support/delay-proxy.ts";
import { manifestOf, runtimePorts, settingsFor } from "./support/gateway.ts";
import { answer, startServer, type TestServer } from "./support/servers.ts";
import {
  callerLimitBurst,
  type Pair,
  SEARCHES_PER_MINUTE,
} from "./support/shared-state-scenarios.ts";

const required = process.env.TRACEFETCH_REQUIRE_REDIS === "1";
const missing = redisServer.redisServerPath() === null ? redisServer.REDIS_MISSING : null;
const SECRET = "a test secret of at least 32 bytes!";
/** What the proxy adds to each round trip in the round-trip case: far above loopback's. */
const TRIP_MS = 150;
/** Chunks further apart than this went out in sequence, not together. */
const GAP_MS = TRIP_MS / 2;
/** The store's delay in the deadline case, far past the search's own budget. */
const SLOW_STORE_MS = 1_500;
const SEARCH_TIMEOUT_MS = 400;
/** The store's timeout: longer than every delay here, so only a search's budget cuts a wait. */
const STORE_TIMEOUT_MS = 5_000;

const mac = (key: Uint8Array, message: Uint8Array) =>
  createHmac("sha256", key).update(message).digest();

type Gateway = { app: ReturnType<typeof createGateway>; state: GuardedState };

if (missing !== null) {
  if (!required) console.log(`redis deadline suite skipped: ${missing}`);
  describe("a search's wait on Redis", { skip: required ? false : missing }, () => {
    it("has a redis-server to run against (TRACEFETCH_REQUIRE_REDIS=1)", () => {
      assert.fail(`TRACEFETCH_REQUIRE_REDIS=1, but ${missing}`);
    });
  });
} else {
  describe("a search's wait on Redis", () => {
    let redis: redisServer.RedisServer;
    let proxy: DelayProxy;
    let provider: TestServer;
    /** When the provider received each search, by performance.now(). */
    const reached: number[] = [];
    const closing: Array<() => Promise<void>> = [];

    /** A gateway over the Redis at `url`; two with one `prefix` are two instances of one deployment. */
    function gatewayOver(
      url: string,
      manifest: Record<string, unknown>,
      prefix = `tracefetch-test:${crypto.randomUUID()}:`,
    ): Gateway {
      const target = parseRedisUrl(url)!;
      const clocks = { now: () => performance.now(), wall: () => Date.now() };
      const state = new GuardedState(new RedisStore(target, prefix), {
        ...clocks,
        timeoutMs: STORE_TIMEOUT_MS,
        secret: SECRET,
        mac,
      });
      const answerCache = new RedisAnswerCache({
        target,
        prefix,
        secret: SECRET,
        mac,
        calls: state,
      });
      closing.push(async () => void await Promise.all([state.close(), answerCache.close()]));
      const settings = settingsFor(manifest, {}, { describeProviders: false, allowLoopback: true });
      const app = createGateway(settings, { ...runtimePorts, state, answerCache });
      return { app, state };
    }

    const entry = () => ({ name: "quick", endpoint: provider.url, cache_ttl_seconds: 60 });
    const search = async (g: Gateway, query: string, timeoutMs = 5_000) => {
      const path = `/v1/search?q=${query}&providers=quick&timeout_ms=${timeoutMs}`;
      const res = await g.app.request(path);
      return { status: res.status, body: await res.json() };
    };

    before(async () => {
      redis = await redisServer.startRedis();
      proxy = await startDelayProxy(redis.port, TRIP_MS);
      const quick = answer("quick", "quick", [{ title: "Q", locator: "https://q.example/1" }]);
      provider = await startServer((req, res, body) => {
        reached.push(performance.now());
        return quick(req, res, body);
      });
    });
    after(async () => {
      for (const close of closing) await close();
      await proxy?.close();
      await provider?.close();
      await redis?.stop();
    });

    it("sends a search's calls before its providers (limit, breakers, flight, cache) as one round trip", async () => {
      proxy.delayMs = TRIP_MS;
      const g = gatewayOver(
        `redis://127.0.0.1:${proxy.port}`,
        manifestOf([entry()], { caller_limits: { searches_per_minute: 1_000 } }),
      );
      // The first search loads the code of the cache and of the limits.
      assert.equal((await search(g, `warm-${crypto.randomUUID()}`)).body.code, "ok");
      for (const round of ["mirrored", "read"]) {
        // Past the mirror's second, the breakers are read from the store too.
        // Between the two, the last search's writes after its answer have long been answered.
        await new Promise((resolve) => setTimeout(resolve, round === "read" ? 1_100 : 3 * TRIP_MS));
        const from = performance.now();
        const seen = reached.length;
        const { body } = await search(g, `one-${round}-${crypto.randomUUID()}`);
        assert.equal(body.code, "ok", JSON.stringify(body));
        assert.equal(reached.length, seen + 1, "the provider was asked");
        const trips = roundTrips(proxy.writes, from, reached[seen] as number, GAP_MS);
        assert.equal(trips, 1, `${round}: ${trips} round trips before the provider`);
      }
      assert.equal(g.state.status().state, "ok");
    });

    it("waits on the store no longer than what is left of the search's timeout_ms", async () => {
      proxy.delayMs = SLOW_STORE_MS;
      const g = gatewayOver(`redis://127.0.0.1:${proxy.port}`, manifestOf([entry()]));
      const started = performance.now();
      const { body } = await search(g, `bounded-${crypto.randomUUID()}`, SEARCH_TIMEOUT_MS);
      const took = performance.now() - started;
      // The store had the whole budget: the provider was left none, and the answer says so.
      assert.equal(body.result.candidates[0].budget, "caller_deadline", JSON.stringify(body));
      // Unbounded, it would have waited SLOW_STORE_MS for the store alone.
      assert.ok(took < SLOW_STORE_MS - 300, `answered after ${Math.round(took)} ms`);
      // Cut short by the caller's own budget, the store was not judged: it had less than its timeout.
      const shared = g.state.status();
      assert.equal(shared.state, "ok");
      assert.ok(shared.fallbacks > 0, "the search went on without the store");
    });

    it("counts a burst right after Redis returns in Redis: at most the limit passes across two instances", async () => {
      const manifest = manifestOf([entry()], {
        caller_limits: { searches_per_minute: SEARCHES_PER_MINUTE },
      });
      const prefix = `tracefetch-test:${crypto.randomUUID()}:`;
      const [a, b] = [0, 1].map(() => gatewayOver(redis.url, manifest, prefix)) as [
        Gateway,
        Gateway,
      ];
      const pair: Pair = {
        a: (path, init) => Promise.resolve(a.app.request(path, init)),
        b: (path, init) => Promise.resolve(b.app.request(path, init)),
      };
      await redis.stop();
      // Each instance learns the store is down, and counts in its memory meanwhile.
      for (const g of [a, b]) {
        assert.equal((await search(g, `down-${crypto.randomUUID()}`)).status, 200);
        assert.equal(g.state.status().state, "degraded");
      }
      await redis.restart();
      // The clients have reconnected and each instance's retry is due: the burst's first call
      // on each tries the store while the others wait for what it finds.
      await new Promise((resolve) => setTimeout(resolve, STORE_RETRY_MS + REDIS_RECONNECT_MAX_MS));
      const { passed } = await callerLimitBurst(pair, "quick");
      assert.ok(passed > 0 && passed <= SEARCHES_PER_MINUTE, `${passed} of 60 passed`);
      for (const g of [a, b]) assert.equal(g.state.status().state, "ok");
    });

    it("reports a cache in a Redis of its own, with no shared state, under shared_state: one guard", async () => {
      const own = await redisServer.startRedis();
      const served = await launch(
        readSettings({
          HOST: "127.0.0.1",
          PORT: "0",
          TRACEFETCH_ALLOW_LOOPBACK: "1",
          TRACEFETCH_CACHE_URL: own.url,
          TRACEFETCH_STATE_SECRET: SECRET,
          TRACEFETCH_MANIFEST: JSON.stringify(manifestOf([entry()])),
        }),
        listen,
      );
      const status = async () =>
        (await (await fetch(`${served.url}/v1/status`)).json()).result.shared_state;
      const searched = async () =>
        (await fetch(`${served.url}/v1/search?q=own-${crypto.randomUUID()}&providers=quick`))
          .status;
      try {
        assert.equal(await searched(), 200);
        assert.deepEqual(await status(), { backend: "memory", state: "ok", fallbacks: 0 });
        await own.stop();
        assert.equal(await searched(), 200, "a cache that fails is a miss");
        const shared = await status();
        assert.equal(shared.backend, "memory");
        assert.equal(shared.state, "degraded");
        assert.ok(shared.fallbacks > 0, JSON.stringify(shared));
        assert.ok(!JSON.stringify(shared).includes(String(own.port)), "no address in the reason");
      } finally {
        await served.close();
        await own.stop();
      }
    });
  });
}
