/**
 * Nothing readable reaches Redis (docs/security.md, "Shared state"): two gateways in this process
 * over one redis-server, both the shared state and the answer cache in it, put through the
 * two-instance scenarios (alternating failures, identical searches joined across both, a joined
 * streamed search, the answer cache with public and token providers, a refresh, a page fetched
 * with a query on one and served from the store on the other, caller limits) while a `MONITOR`
 * connection records every command the server receives. No command may hold a query, the locator
 * or title only a token provider returned, a caller's `sub`, or a token (a JWT, whose text always
 * starts `eyJ`). Without redis-server the suite is skipped in one line, or fails when
 * TRACEFETCH_REQUIRE_REDIS=1. Runs unchanged under Node and `deno test`.
 *
 * The fetched page is public, so the instances share it through the store: its host name resolves
 * to a global address here, and the connector sends what is for that address to the loopback site
 * the test starts, and refuses every other address, so nothing leaves this machine.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Redis } from "ioredis";
import { createGateway } from "../src/http/mod.ts";
import { GuardedState } from "../src/state/guarded-state.ts";
import { RedisStore } from "../src/state/redis-state.ts";
import { RedisAnswerCache } from "../src/state/redis-cache.ts";
import { parseRedisUrl } from "../src/state/redis-url.ts";
import * as redisServer from "./support/redis-server.ts";
import { manifestOf, runtimePorts, settingsFor } from "./support/gateway.ts";
import {
  alternatingFailures,
  callerLimitBurst,
  identicalBurst,
  type Instance,
  type Pair,
  type ScenarioProviders,
  scenarioProviders,
  SEARCHES_PER_MINUTE,
  searchesAt,
} from "./support/shared-state-scenarios.ts";
import {
  type AppPair,
  type CacheWorld,
  cacheWorld,
  privateStaysWithItsCaller,
  refreshDrops,
  repeatIsCached,
} from "./support/answer-cache-scenarios.ts";
import { sign } from "./support/auth-keys.ts";
import { StoreGuard } from "../src/state/store-guard.ts";
import type { EvidencePorts } from "../src/http/fetch-route.ts";
import { nodeFetchParts } from "../src/runtime/node-evidence.ts";
import type { Listener } from "./support/fetch-fixture.ts";
import { startSite } from "./support/evidence-gateway.ts";

const required = process.env.TRACEFETCH_REQUIRE_REDIS === "1";
const missing = redisServer.redisServerPath() === null ? redisServer.REDIS_MISSING : null;
const SECRET = "a test secret of at least 32 bytes!";
/** The store's timeout here: above a busy machine's slowest round trip, so nothing falls back. */
const TIMEOUT_MS = 1_000;

type Gateway = { app: ReturnType<typeof createGateway>; close: () => Promise<void> };

/** The fetched page's host, and the global address it resolves to here (never connected to). */
const PAGE_HOST = "tides.example";
const PAGE_ADDRESS = "93.184.216.34";

/** Fetch ports for a public page served on 127.0.0.1: see the file's comment. */
function publicPagePorts(): EvidencePorts {
  const { connector } = nodeFetchParts();
  return {
    resolve: (host) =>
      Promise.resolve(
        host === PAGE_HOST
          ? { ok: true, addresses: [PAGE_ADDRESS] }
          : { ok: false, reason: "no_address", message: `${host} is not this test's` },
      ),
    connector: {
      pinsAddress: true,
      send: (request) =>
        request.address === PAGE_ADDRESS
          ? connector.send({ ...request, address: "127.0.0.1" })
          : Promise.resolve({ ok: false, reason: "unreachable", message: "not this test's" }),
    },
  };
}

if (missing !== null) {
  if (!required) console.log(`redis monitor suite skipped: ${missing}`);
  describe("nothing readable reaches Redis", { skip: required ? false : missing }, () => {
    it("has a redis-server to run against (TRACEFETCH_REQUIRE_REDIS=1)", () => {
      assert.fail(`TRACEFETCH_REQUIRE_REDIS=1, but ${missing}`);
    });
  });
} else {
  describe("nothing readable reaches Redis", () => {
    let redis: redisServer.RedisServer;
    let client: Redis;
    let monitor: Redis;
    /** Every command the server received, each as its arguments. */
    const commands: string[][] = [];
    let providers: ScenarioProviders;
    let world: CacheWorld;
    const gateways: Gateway[] = [];
    /** Queries these searches sent, and callers' `sub`s: none may reach Redis. */
    const queries: string[] = [];
    const subs = ["alice", "bob"];

    function gatewayOver(manifest: Record<string, unknown>, prefix: string): Gateway {
      const target = parseRedisUrl(redis.url)!;
      const clocks = { now: () => performance.now(), wall: () => Date.now() };
      const state = new GuardedState(new RedisStore(target, prefix), {
        ...clocks,
        timeoutMs: TIMEOUT_MS,
        secret: SECRET,
      });
      const answerCache = new RedisAnswerCache({
        target,
        prefix,
        secret: SECRET,
        calls: new StoreGuard({ timeoutMs: TIMEOUT_MS, now: clocks.now }),
      });
      const settings = settingsFor(manifest, world.env, {
        describeProviders: false,
        allowLoopback: true,
      });
      const app = createGateway(settings, {
        ...runtimePorts,
        state,
        answerCache,
        evidence: publicPagePorts(),
      });
      return {
        app,
        close: async () => void await Promise.all([state.close(), answerCache.close()]),
      };
    }

    /** Two gateways over one prefix, as two instances of one deployment. */
    function pairOver(manifest: Record<string, unknown>, token?: string): Pair & AppPair {
      const prefix = `tracefetch-test:${crypto.randomUUID()}:`;
      const [a, b] = [0, 1].map(() => {
        const made = gatewayOver(manifest, prefix);
        gateways.push(made);
        const call: Instance = (path, init) => {
          const headers = new Headers(init?.headers);
          if (token !== undefined && !headers.has("authorization")) {
            headers.set("authorization", `Bearer ${token}`);
          }
          return Promise.resolve(made.app.request(path, { ...init, headers }));
        };
        return Object.assign(call, { request: call });
      }) as [Instance & AppPair["a"], Instance & AppPair["b"]];
      return { a, b };
    }

    let entries: Array<Record<string, unknown> & { name: string }>;
    let site: Listener;
    /** The receipts the gateways signed for the fetched page: see the check's comment. */
    const receipts: string[] = [];

    before(async () => {
      redis = await redisServer.startRedis();
      client = new Redis(redis.url);
      client.on("error", () => {});
      const watching = await client.monitor();
      watching.on("monitor", (_time: string, args: string[]) => commands.push(args));
      // MONITOR shows a command once the connection says OK: one PING seen says it is on.
      const probe = new Redis(redis.url);
      await probe.ping("monitor-on");
      probe.disconnect();
      monitor = watching;
      const started = await scenarioProviders();
      providers = started.providers;
      world = await cacheWorld();
      // The cache world's "failing" is the scenarios' too: one of them is enough.
      entries = [...started.entries, ...world.entries.filter((e) => e.name !== "failing")];
      site = await startSite();
    });
    after(async () => {
      for (const g of gateways) await g.close();
      monitor?.disconnect();
      client?.disconnect();
      for (const server of Object.values(providers ?? {})) await server.close();
      await world?.close();
      await site?.close();
      await redis?.stop();
    });

    it("the scenarios run: failures, joined searches (plain and streamed), the cache, a refresh, a fetched page, caller limits", async () => {
      const pair = pairOver(manifestOf(entries, { fetch: {} }));
      queries.push("alternating");
      const contacts = await alternatingFailures(pair, providers.failing);
      assert.ok(contacts >= 5 && contacts <= 6, `contacted ${contacts} times`);
      queries.push("identical");
      assert.equal(await identicalBurst(pair, providers.slow), 1);

      // A search joined across the two: the follower answers with its own query.
      const joined = `joined-${crypto.randomUUID()}`;
      queries.push(joined);
      const before = searchesAt(providers.slow);
      const first = pair.a(`/v1/search?q=${joined}&providers=slow`);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const bodies = await Promise.all([first, pair.b(`/v1/search?q=${joined}&providers=slow`)]
        .map(async (res) => (await res).json()));
      assert.equal(searchesAt(providers.slow) - before, 1, "the second search joined the first");
      assert.deepEqual(bodies.map((b) => b.result.query), [joined, joined]);
      assert.deepEqual(bodies.map((b) => b.result.decision.coalesced === true), [false, true]);

      // The same, streamed.
      const streamed = `streamed-${crypto.randomUUID()}`;
      queries.push(streamed);
      const path = `/v1/search?q=${streamed}&providers=slow&stream=ndjson`;
      const leading = pair.a(path);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const texts = await Promise.all([leading, pair.b(path)].map(async (r) => (await r).text()));
      assert.equal(searchesAt(providers.slow) - before, 2, "the streamed search joined too");
      for (const text of texts) assert.ok(text.includes(`"query":"${streamed}"`), text);

      queries.push("repeat-", "mine-", "refresh-");
      await repeatIsCached(pair, world);
      const { elsewhere } = await privateStaysWithItsCaller(pair, world);
      assert.equal(elsewhere.result.candidates[0].cached, undefined);
      await refreshDrops(pair, world);

      // A public page fetched by a caller with a query on A, then served to B from the store.
      const fetchQuery = `spring-${crypto.randomUUID()}`;
      queries.push(fetchQuery);
      const fetchToken = await sign(world.caller, { sub: "alice" });
      const fetchPage = async (instance: Instance) => {
        const res = await instance("/v1/fetch", {
          method: "POST",
          headers: { authorization: `Bearer ${fetchToken}`, "content-type": "application/json" },
          body: JSON.stringify({
            url: `http://${PAGE_HOST}:${site.port}/article`,
            query: fetchQuery,
          }),
        });
        const body = await res.json();
        assert.equal(res.status, 200, JSON.stringify(body));
        if (typeof body.result.receipt === "string") receipts.push(body.result.receipt);
        return body.result;
      };
      assert.equal((await fetchPage(pair.a)).cached, false);
      // A's write runs after its answer: time for it to land on a machine running every suite.
      await new Promise((resolve) => setTimeout(resolve, 250));
      const shared = await fetchPage(pair.b);
      assert.equal(shared.cached, true, "B read the page A stored");
      assert.ok(shared.evidence.passages.length > 0, "B made the passages of its own query");
      assert.equal(site.requests.filter((r) => r.path === "/article").length, 1);

      // Caller limits, counted per `sub`: the caller's digest alone reaches the store.
      const sub = `carol-${crypto.randomUUID()}`;
      subs.push(sub);
      const token = await sign(world.caller, { sub });
      const limited = pairOver(
        manifestOf(entries, { caller_limits: { searches_per_minute: SEARCHES_PER_MINUTE } }),
        token,
      );
      queries.push("limited");
      assert.deepEqual(await callerLimitBurst(limited, "slow"), { passed: 20, refused: 40 });
    });

    it("no command the server received holds a query, a private locator, a sub or a token", async () => {
      // MONITOR's last lines arrive after the commands' answers.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const written = commands.filter((args) => /^(rpush|evalsha|eval|set)$/i.test(args[0] ?? ""));
      assert.ok(commands.length > 200, `MONITOR saw ${commands.length} commands`);
      assert.ok(written.length > 50, `${written.length} writes and scripts`);
      assert.ok(
        commands.some((args) => args.some((a) => a.includes('"kind":"done"'))),
        "a joined flight's end went through the store",
      );
      assert.ok(
        commands.some((args) => args.some((a) => a.includes("open page"))),
        "a public answer was cached in the store",
      );
      assert.ok(
        commands.some((args) => args.some((a) => a.includes("Spring tides"))),
        "a fetched page was kept in the store",
      );
      assert.ok(receipts.length > 0, "the fetched page was signed");
      const needles = [
        ...queries,
        ...subs,
        "eyJ",
        "Bearer",
        "secret.example",
        "secret page",
      ];
      for (const args of commands) {
        // A script's own text is the gateway's code, sent when the server lacks it.
        const sent = /^eval$/i.test(args[0] ?? "") ? [args[0], ...args.slice(2)] : args;
        // A fetched page is kept with its receipt: the gateway's signed statement of what a public
        // page held, given to anyone who fetches it, never a caller's credential. It is a JWS, so
        // it is set aside before the search for `eyJ`, and only it.
        const text = receipts.reduce((t, receipt) => t.replaceAll(receipt, ""), sent.join(" "));
        for (const needle of needles) {
          assert.ok(!text.includes(needle), `"${needle}" reached Redis: ${text.slice(0, 400)}`);
        }
      }
    });
  });
}
