/**
 * The Redis adapter (src/state/redis-state.ts) against a real redis-server on loopback: the
 * shared-state contract through two GuardedState instances on two connections, its Lua breaker
 * step held to breakerStep over random event sequences, a TTL on every key it leaves, and how it
 * fails (fast, from memory, with no address in the reason) while Redis is down and recovers after.
 * Without redis-server the suite is skipped in one line, or fails when TRACEFETCH_REQUIRE_REDIS=1.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { Redis } from "ioredis";
import { type Breaker, type BreakerEvent, breakerStep, type Verdict } from "../src/core/breaker.ts";
import { FLIGHT_LEASE_MS, STORE_RETRY_MS } from "../src/protocol/state-limits.ts";
import { GuardedState } from "../src/state/guarded-state.ts";
import { RedisStore } from "../src/state/redis-state.ts";
import { parseRedisUrl } from "../src/state/redis-url.ts";
import { type StateStore, StoreFailure } from "../src/state/state-store.ts";
import { LOG_SEARCH_SCRIPT } from "../src/state/redis-log-script.ts";
import {
  EMPTY_LOG,
  type LogAsk,
  type LogLimit,
  type LogVerdict,
  type SearchLog,
  searchLogStep,
} from "../src/core/search-log.ts";
import { CALLER_COST_BUCKET_MS } from "../src/protocol/limits.ts";
import * as redisServer from "./support/redis-server.ts";
import { launch } from "../src/runtime/launch.ts";
import { listen } from "../src/runtime/node-listen.ts";
import { readSettings } from "../src/config/settings.ts";
import { ConfigError } from "../src/protocol/config-error.ts";
import { stateContract } from "./support/state-contract.ts";
import { manifestOf } from "./support/gateway.ts";

const required = process.env.TRACEFETCH_REQUIRE_REDIS === "1";
/** How long an operation may take while Redis is down: it must fail at once, never wait. */
const FAIL_FAST_MS = 50;
/** The store's timeout here: above a busy machine's slowest round trip, so no case falls back. */
const TIMEOUT_MS = 1_000;
/** The property's runs, events per run, and the time it may take in all, shrinking included. */
const RUNS = 100;
const MAX_EVENTS = 20;
const PROPERTY_LIMIT_MS = 60_000;
/** A probe claim's length here, as in the contract: short, so that it lapses within a case. */
const CLAIM_MS = 400;

const clocks = { now: () => performance.now(), wall: () => Date.now() };
const options = { ...clocks, timeoutMs: TIMEOUT_MS, secret: "s".repeat(32) };
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const target = (url: string) => parseRedisUrl(url)!;
const freshPrefix = () => `tracefetch-test:${crypto.randomUUID()}:`;
const wait = (waitMs: number | null): Verdict => ({ kind: "failure", waitMs });
const SUCCEEDED: Verdict = { kind: "success" };
const NEUTRAL: Verdict = { kind: "neutral" };
const failure = (ms: number | null = null): BreakerEvent => ({
  kind: "attempt",
  verdict: wait(ms),
});
const success: BreakerEvent = { kind: "attempt", verdict: SUCCEEDED };

/** Why the suite cannot run here, or null when redis-server is installed. */
const missing = redisServer.redisServerPath() === null ? redisServer.REDIS_MISSING : null;
if (missing !== null) {
  if (!required) console.log(`redis suite skipped: ${missing}`);
  describe("shared state over Redis", { skip: required ? false : missing }, () => {
    it("has a redis-server to run against (TRACEFETCH_REQUIRE_REDIS=1)", () => {
      assert.fail(`TRACEFETCH_REQUIRE_REDIS=1, but ${missing}`);
    });
  });
} else {
  describe("shared state over Redis", () => {
    let server: redisServer.RedisServer;
    before(async () => {
      server = await redisServer.startRedis();
    });
    after(async () => {
      await server?.stop();
    });

    /** Guarded instances over stores of their own on one prefix, all closed together. */
    function instances(prefix = freshPrefix()) {
      const open: GuardedState[] = [];
      const make = () => {
        const state = new GuardedState(new RedisStore(target(server.url), prefix), options);
        open.push(state);
        return state;
      };
      const close = async () => void await Promise.all(open.map((s) => s.close()));
      return { prefix, make, close };
    }

    stateContract({
      name: "redis, two connections",
      shared: true,
      make: () => {
        const { make, close } = instances();
        return Promise.resolve({ a: make(), b: make(), fresh: make, close });
      },
    });

    it(`steps a breaker in Lua as breakerStep does, at the store's time (${RUNS} runs of up to ${MAX_EVENTS} events)`, async () => {
      const store = new RedisStore(target(server.url), freshPrefix());
      try {
        await checkBreakerSteps(store);
      } finally {
        await store.close();
      }
    });

    it(`logs a caller's searches in Lua as searchLogStep does, at a clock the test sets (${RUNS} runs of up to ${MAX_EVENTS} searches)`, async () => {
      const client = new Redis(server.url);
      try {
        await checkLogSteps(client);
      } finally {
        client.disconnect();
      }
    });

    it("leaves a TTL on every key; a flight that ended leaves no lease, and nothing after FLIGHT_LEASE_MS", async () => {
      const world = instances();
      const inspect = new Redis(server.url, { lazyConnect: true });
      try {
        const [a, b] = [world.make(), world.make()];
        for (let i = 0; i < 5; i++) await a.stepBreaker("failing", failure(), CLAIM_MS);
        await a.stepBreaker("waiting", failure(LONG_WAIT_MS), CLAIM_MS);
        await a.stepBreaker("recovered", failure(), CLAIM_MS);
        await b.stepBreaker("recovered", success, CLAIM_MS);
        await a.leaseProbe("health", "stored", 5_000);
        await a.storeProbeResult("health", "stored", { ok: true }, 60_000);
        await b.leaseProbe("describe", "leased", 5_000);
        for (const ending of ["followed", "alone", "dropped"] as const) {
          const lead = await a.flight(ending);
          assert.equal(lead?.kind, "lead");
          if (lead?.kind !== "lead") return;
          if (ending !== "alone") assert.equal((await b.flight(ending))?.kind, "follow");
          lead.emit({ n: 1 });
          await lead.end(ending === "dropped" ? null : { n: 2 });
        }
        await inspect.connect();
        const keys = async () => (await inspect.keys(`${world.prefix}*`)).sort();
        const kept = await keys();
        assert.ok(kept.some((k) => k.endsWith(":events")), `an ended flight's events: ${kept}`);
        for (const key of kept) assert.ok(await inspect.pttl(key) > 0, `${key} has no TTL`);
        const leases = kept.filter((k) => /\{flight:[0-9a-f]{64}\}:lease$/.test(k));
        assert.deepEqual(leases, [], "no flight holds a lease once it ended");
        await sleep(FLIGHT_LEASE_MS + 200);
        assert.deepEqual((await keys()).map((k) => k.slice(world.prefix.length)), [
          "{provider:failing}:breaker",
          "{provider:leased}:lease:describe",
          "{provider:stored}:probe:health",
          "{provider:waiting}:breaker",
        ]);
      } finally {
        inspect.disconnect();
        await world.close();
      }
    });

    it("a database the server does not have (99 of its 16) fails the start in one line, for the state and the cache", async () => {
      const state = { TRACEFETCH_STATE_SECRET: "s".repeat(32), PORT: "0", HOST: "127.0.0.1" };
      const manifest = JSON.stringify(manifestOf([]));
      for (
        const [variable, env] of [
          ["TRACEFETCH_STATE_URL", { TRACEFETCH_STATE_URL: `${server.url}/99` }],
          [
            "TRACEFETCH_CACHE_URL",
            { TRACEFETCH_STATE_URL: `${server.url}/1`, TRACEFETCH_CACHE_URL: `${server.url}/99` },
          ],
        ] as const
      ) {
        const started = launch(
          readSettings({ ...state, ...env, TRACEFETCH_MANIFEST: manifest }),
          listen,
        );
        const error = await started.then(async (s) => {
          await s.close();
          return null;
        }, (e: unknown) => e);
        assert.ok(error instanceof ConfigError, `${variable}: ${error}`);
        assert.equal(
          error.message,
          `${variable} names database 99, which the Redis server does not have (it has databases 0 to its \`databases\` setting minus one)`,
        );
        assert.ok(!error.message.includes(String(server.port)));
      }
      // Its store, once made, never writes to database 0 instead: every call fails.
      const prefix = freshPrefix();
      const store: StateStore = new RedisStore(target(`${server.url}/99`), prefix);
      const signal = new AbortController().signal;
      const zero = new Redis(server.url, { lazyConnect: true });
      try {
        const failed = await store.stepBreaker("p", failure(), CLAIM_MS, signal).catch((e) => e);
        assert.ok(failed instanceof StoreFailure);
        assert.equal(failed.reason, "the store has no database 99");
        await zero.connect();
        assert.deepEqual(await zero.keys(`${prefix}*`), [], "nothing landed in database 0");
      } finally {
        zero.disconnect();
        await store.close();
      }
      // The last database the server has is taken.
      const last = new RedisStore(target(`${server.url}/15`), freshPrefix());
      try {
        assert.equal(await last.startProblem(), null);
        assert.deepEqual((await last.stepBreaker("p", failure(), CLAIM_MS)).effect, {
          kind: "none",
        });
      } finally {
        await last.close();
      }
    });

    it("with Redis stopped fails within 50 ms naming no address, answers from memory, reads degraded; ok once back", async () => {
      const world = instances();
      const direct: StateStore = new RedisStore(target(server.url), world.prefix);
      const signal = new AbortController().signal;
      let late: StateStore | undefined;
      try {
        const state = world.make();
        assert.deepEqual(await state.stepBreaker("p", failure(), CLAIM_MS), { kind: "none" });
        assert.equal((await direct.breakers(["p"], signal)).get("p")?.breaker?.failures, 1);
        assert.deepEqual(state.status(), { backend: "redis", state: "ok", fallbacks: 0 });
        await server.stop();
        // Calls of each kind: a script over many keys, over one, a plain command, flight scripts.
        const calls = (store: StateStore): Array<[string, () => Promise<unknown>]> => [
          ["breakers", () => store.breakers(["p"], signal)],
          ["stepBreaker", () => store.stepBreaker("p", failure(), CLAIM_MS, signal)],
          ["leaseProbe", () => store.leaseProbe("health", "p", 1_000, signal)],
          ["claimFlight", () => store.claimFlight("k", "id", 1_000, signal)],
          ["publishFlight", () => store.publishFlight("k", "id", [{}], true, signal)],
          ["readFlight", () => store.readFlight("k", "id", 0, 0, signal)],
        ];
        // One that never connected: its first connection, with a password, is refused.
        late = new RedisStore(target(`redis://:hunter2@127.0.0.1:${server.port}/0`), world.prefix);
        for (const [what, call] of [...calls(direct), ...calls(late)]) {
          assertClean(await fast(what, call), server.port);
        }
        const closing = () => late!.close().then(() => late!.close());
        assert.equal(await fast("closing a store that is down, twice", closing), null);
        const guarded: Array<[string, () => Promise<unknown>]> = [
          ["stepBreaker", () => state.stepBreaker("p", failure(), CLAIM_MS)],
          ["breakers", async () => await state.breakers(["q"])],
          ["leaseProbe", () => state.leaseProbe("health", "p", 1_000)],
          ["flight", () => state.flight("identity")],
        ];
        for (const [what, call] of guarded) assert.equal(await fast(what, call), null, what);
        const down = state.status();
        assert.equal(down.state, "degraded");
        assert.equal(down.fallbacks, guarded.length);
        assertClean(down.reason, server.port);
        assert.match(down.reason ?? "", /refused|closed/);
        await server.restart();
        await sleep(STORE_RETRY_MS);
        assert.deepEqual(await state.stepBreaker("r", failure(), CLAIM_MS), { kind: "none" });
        const back = { backend: "redis", state: "ok", fallbacks: guarded.length };
        assert.deepEqual(state.status(), back);
        const stored = (await direct.breakers(["r"], signal)).get("r")?.breaker;
        assert.equal(stored?.failures, 1, "stepped in Redis");
      } finally {
        await late?.close();
        await direct.close();
        await world.close();
      }
    });
  });
}

/** Runs a call that must settle within FAIL_FAST_MS: what it threw, or null. */
async function fast(what: string, call: () => Promise<unknown>): Promise<unknown> {
  const started = performance.now();
  const error = await call().then(() => null, (e: unknown) => e);
  const took = performance.now() - started;
  assert.ok(took < FAIL_FAST_MS, `${what} took ${took.toFixed(1)} ms`);
  return error;
}

/** A store's failure, or the reason status gives: a reason that names no address, no secret. */
function assertClean(failure: unknown, port: number): void {
  const reason = failure instanceof StoreFailure ? failure.reason : failure;
  assert.ok(typeof reason === "string" && reason !== "", `not a store's failure: ${failure}`);
  for (const leak of ["127.0.0.1", String(port), "redis://", "hunter2", "tracefetch-test"]) {
    assert.ok(!reason.includes(leak), `"${reason}" names ${leak}`);
  }
}

/**
 * Random event sequences, each on a breaker of its own (half of them after five failures, so a
 * probe is out), stepped by the store and by breakerStep at the time the store answered with: the
 * same effects and breakers. EXAMPLES come first, so every seed reaches each way a probe counts.
 */
async function checkBreakerSteps(store: StateStore): Promise<void> {
  const signal = new AbortController().signal;
  let run = 0;
  const steps = fc.array(step, { minLength: 1, maxLength: MAX_EVENTS, size: "max" });
  const property = fc.asyncProperty(fc.boolean(), steps, async (warm, plan) => {
    const name = `property-${++run}`;
    let model: Breaker | null = null;
    const claims: Claim[] = [];
    const both = async (event: BreakerEvent, claimMs: number) => {
      const { effect, read } = await store.stepBreaker(name, event, claimMs, signal);
      const expected = breakerStep(model, event, { now: read.now, wall: read.now }, claimMs);
      const at: string = `${JSON.stringify(event)} on ${JSON.stringify(model)} at ${read.now}`;
      assert.deepEqual(effect, expected.effect, at);
      assert.deepEqual(read.breaker, expected.breaker, at);
      model = expected.breaker;
      if (effect.kind === "claimed") claims.push(effect);
    };
    // Five failures with a claim that outlasts most runs: the probe they claim is out.
    for (let i = 0; warm && i < 5; i++) await both(failure(), CLAIM_MS);
    for (const s of plan) {
      if (s.pauseMs > 0) await sleep(s.pauseMs);
      await both(eventOf(s, claims), s.claimMs);
    }
    assert.deepEqual((await store.breakers([name], signal)).get(name)?.breaker, model);
  });
  const limits = { interruptAfterTimeLimit: PROPERTY_LIMIT_MS, markInterruptAsFailure: true };
  const details = await fc.check(property, { numRuns: RUNS, examples: EXAMPLES, ...limits });
  if (details.failed) assert.fail(await fc.asyncDefaultReportMessage(details));
  assert.equal(details.numRuns, RUNS);
}

/** A wait longer than the first backoff, so a probe that asks for it is suspended for it. */
const LONG_WAIT_MS = 60_000;

/**
 * A verdict, a failure with no wait most often (so that five in a row happen); else a wait that
 * ends within a run (one with a fraction the store must keep exactly) or a long one.
 */
const FAILURES = [null, null, null, null, null, null, 1, 7.25, LONG_WAIT_MS].map(wait);
const verdict = fc.constantFrom(...FAILURES, SUCCEEDED, NEUTRAL);

type Claim = { epoch: number; probeUntil: number };
type Step = typeof step extends fc.Arbitrary<infer T> ? T : never;

/**
 * One event, after a pause: an attempt, a resume, or a probe's verdict for one of the claims made
 * so far, as it was, with a stale epoch or claim, or for a claim that never was.
 */
const step = fc.record({
  pauseMs: fc.oneof({ arbitrary: fc.constant(0), weight: 3 }, fc.constantFrom<number>(3, 10, 20)),
  claimMs: fc.constantFrom<number>(0, 5, 15, CLAIM_MS),
  kind: fc.constantFrom("attempt", "attempt", "attempt", "attempt", "resume", "probed"),
  verdict,
  pick: fc.nat(),
  stale: fc.constantFrom("none", "none", "epoch", "until"),
});

function eventOf(s: Step, claims: Claim[]): BreakerEvent {
  if (s.kind === "attempt") return { kind: "attempt", verdict: s.verdict };
  if (s.kind === "resume") return { kind: "resume" };
  const claim = claims[s.pick % Math.max(1, claims.length)] ?? { epoch: 0, probeUntil: 1 };
  return {
    kind: "probed",
    epoch: claim.epoch - (s.stale === "epoch" ? 1 : 0),
    probeUntil: claim.probeUntil + (s.stale === "until" ? 1 : 0),
    verdict: s.verdict,
  };
}

/** The one probe out (the warm-up's), answered with `verdict`; or an attempt with it. */
const probe = (verdict: Verdict, kind: Step["kind"] = "probed"): Step => ({
  ...NOW,
  kind,
  verdict,
});
const NOW = { pauseMs: 0, claimMs: CLAIM_MS, pick: 0, stale: "none" as const };

/**
 * After five failures, the probe they claimed answers: a success forgets all, a neutral verdict
 * keeps the failures, a long wait suspends for it; and after a reset, it is stale and forgotten.
 */
const EXAMPLES: Array<[boolean, Step[]]> = [
  [true, [probe(SUCCEEDED)]],
  [true, [probe(NEUTRAL)]],
  [true, [probe(wait(LONG_WAIT_MS))]],
  [true, [probe(SUCCEEDED, "attempt"), probe(wait(null))]],
];

/**
 * The caller-log script (redis-log-script.ts) with the store's clock replaced by ARGV[8], so that
 * the test sets `now`: everything after the clock is the script as Redis runs it.
 */
function logScriptAt(): string {
  const clock = /local t = redis\.call\('TIME'\)\nlocal now = [^\n]+\n/;
  assert.match(LOG_SEARCH_SCRIPT, clock);
  return LOG_SEARCH_SCRIPT.replace(clock, "local now = tonumber(ARGV[8])\n");
}

type LogCall = (...args: Array<string | number>) => Promise<unknown>;

/**
 * Random sequences of asks from one caller, each after a random advance of the clock, logged by
 * the script and by searchLogStep at the same `now`: the same verdicts, the same waits, and the
 * same log (what the next ask reads). Windows are seconds or more, so no key's TTL, counted in real
 * time, lapses within a run.
 */
async function checkLogSteps(client: Redis): Promise<void> {
  client.defineCommand("tracefetchLogAt", { lua: logScriptAt(), numberOfKeys: 2 });
  const call = (client as unknown as Record<string, LogCall>).tracefetchLogAt as LogCall;
  let run = 0;
  const ask = fc.record({
    advanceMs: fc.constantFrom(0, 0, 1, 7, 500, 1_500, 30_000, 61_000),
    searches: fc.option(
      fc.record({ limit: fc.integer({ min: 1, max: 4 }), windowMs: fc.constantFrom(2_000, 5_000) }),
      { nil: undefined },
    ),
    cost: fc.option(
      fc.record({
        limit: fc.integer({ min: 1, max: 300 }),
        windowMs: fc.constantFrom(60_000, 120_000),
        micros: fc.constantFrom(0, 1, 40, 99, 150, 301),
      }),
      { nil: undefined },
    ),
  });
  const property = fc.asyncProperty(
    fc.array(ask, { minLength: 1, maxLength: MAX_EVENTS }),
    async (asks) => {
      const key = `log-property:${++run}:${crypto.randomUUID()}`;
      let model: SearchLog = EMPTY_LOG;
      let now = 1_700_000_000_000;
      for (const { advanceMs, searches, cost } of asks) {
        now += advanceMs;
        const logAsk: LogAsk = {
          ...(searches ? { searches } : {}),
          ...(cost ? { cost } : {}),
        };
        const reply = await call.call(
          client,
          `{${key}}:log`,
          `{${key}}:cost`,
          searches?.limit ?? 0,
          searches?.windowMs ?? 1,
          crypto.randomUUID(),
          cost?.limit ?? 0,
          cost?.windowMs ?? 1,
          cost?.micros ?? 0,
          CALLER_COST_BUCKET_MS,
          now,
        ) as [number, number, string];
        const expected = searchLogStep(model, now, logAsk);
        const got: LogVerdict = reply[0] === 1
          ? { admitted: true }
          : { admitted: false, limit: reply[2] as LogLimit, retryAfterMs: reply[1] };
        assert.deepEqual(
          got,
          expected.verdict,
          `${JSON.stringify(logAsk)} at ${now} on ${JSON.stringify(model)}`,
        );
        model = expected.log;
      }
    },
  );
  const limits = { interruptAfterTimeLimit: PROPERTY_LIMIT_MS, markInterruptAsFailure: true };
  const details = await fc.check(property, { numRuns: RUNS, ...limits });
  if (details.failed) assert.fail(await fc.asyncDefaultReportMessage(details));
  assert.equal(details.numRuns, RUNS);
}
