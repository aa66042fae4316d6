/**
 * The Lua flight scripts (src/state/redis-scripts.ts) held to the flight steps every other store
 * runs (src/state/shard-steps.ts, through MemoryStore): random sequences of claims, renewals,
 * publishes, ends, drops and reads of one flight from three ids give the same answers from a real
 * redis-server on loopback and from the memory store, and each id then reads the same flight.
 * Leases here outlast a run, so neither store's clock decides anything within it.
 * Without redis-server the suite is skipped in one line, or fails when TRACEFETCH_REQUIRE_REDIS=1.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { RedisStore } from "../src/state/redis-state.ts";
import { MemoryStore } from "../src/state/memory-store.ts";
import { parseRedisUrl } from "../src/state/redis-url.ts";
import type { StateStore } from "../src/state/state-store.ts";
import * as redisServer from "./support/redis-server.ts";

const required = process.env.TRACEFETCH_REQUIRE_REDIS === "1";
/** The property's runs, operations per run, and the time it may take in all, shrinking included. */
const RUNS = 500;
const MAX_OPS = 24;
const PROPERTY_LIMIT_MS = 60_000;
/** A lease no run outlives: what the first property compares is the order of operations. */
const LEASE_MS = 60_000;
/**
 * The second property's short lease and its wait: the memory store's clock moves by WAIT_MS at a
 * wait and never else, Redis's by WAIT_MS and the round trips, which SHORT_LEASE_MS leaves room for.
 */
const SHORT_LEASE_MS = 150;
const WAIT_MS = 250;
const TIMED_RUNS = 40;
const ACTORS = ["a", "b", "c"] as const;

const op = fc.oneof(
  fc.record({ kind: fc.constant("claim" as const), actor: fc.nat(2), short: fc.boolean() }),
  fc.record({ kind: fc.constant("renew" as const), actor: fc.nat(2), short: fc.boolean() }),
  fc.record({
    kind: fc.constant("publish" as const),
    actor: fc.nat(2),
    count: fc.nat(2),
    last: fc.boolean(),
  }),
  fc.record({ kind: fc.constant("end" as const), actor: fc.nat(2), short: fc.boolean() }),
  fc.record({ kind: fc.constant("drop" as const), actor: fc.nat(2) }),
  fc.record({ kind: fc.constant("read" as const), actor: fc.nat(2), from: fc.nat(3) }),
);
type Op = typeof op extends fc.Arbitrary<infer T> ? T : never;
/** The operations with time: a wait, which lets every short lease lapse in both stores. */
const timedOp = fc.oneof(
  { arbitrary: op, weight: 6 },
  { arbitrary: fc.record({ kind: fc.constant("wait" as const) }), weight: 1 },
);
type TimedOp = Op | { kind: "wait" };

/** Timed runs that come first: a renewal, a follower's read and a publish after the lease lapsed. */
const TIMED_EXAMPLES: [TimedOp[]][] = [
  [[
    { kind: "claim", actor: 0, short: true },
    { kind: "wait" },
    { kind: "renew", actor: 0, short: false },
    { kind: "claim", actor: 1, short: false },
  ]],
  [[
    { kind: "claim", actor: 0, short: true },
    { kind: "claim", actor: 1, short: false },
    { kind: "publish", actor: 0, count: 1, last: false },
    { kind: "wait" },
    { kind: "read", actor: 1, from: 0 },
    { kind: "publish", actor: 0, count: 1, last: true },
    { kind: "end", actor: 0, short: false },
  ]],
];

/** Runs that come first: a leader publishing after its last event, and one dropping a followed flight. */
const EXAMPLES: [Op[]][] = [
  [[
    { kind: "claim", actor: 0, short: false },
    { kind: "publish", actor: 0, count: 1, last: true },
    { kind: "publish", actor: 0, count: 1, last: false },
  ]],
  [[
    { kind: "claim", actor: 0, short: false },
    { kind: "claim", actor: 1, short: false },
    { kind: "publish", actor: 0, count: 2, last: false },
    { kind: "drop", actor: 0 },
    { kind: "publish", actor: 0, count: 1, last: true },
    { kind: "read", actor: 1, from: 0 },
  ]],
];

/**
 * What each actor knows: the id of its last claim (fresh at each, as GuardedState's are), which it
 * renews, publishes to, ends and drops, and the id that claim answered (its own when it leads, the
 * leader's when it follows), which it reads.
 */
type Actors = { own: string[]; joined: string[] };

/** One operation on one store, its answer as a value to compare (undefined for none). */
async function apply(
  store: StateStore,
  key: string,
  actors: Actors,
  o: Op,
  n: number,
  timed: boolean,
) {
  const signal = new AbortController().signal;
  const id = actors.own[o.actor] as string;
  const leaseMs = timed && o.kind !== "publish" && o.kind !== "drop" && o.kind !== "read" &&
      o.short
    ? SHORT_LEASE_MS
    : LEASE_MS;
  switch (o.kind) {
    case "claim": {
      const claimed = await store.claimFlight(key, id, leaseMs, signal);
      actors.joined[o.actor] = claimed.id;
      return claimed;
    }
    case "renew":
      return await store.renewFlight(key, id, leaseMs, signal);
    case "publish": {
      const events = Array.from({ length: o.count }, (_, i) => ({ from: o.actor, n, i }));
      return await store.publishFlight(key, id, events, o.last, signal);
    }
    case "end":
      return await store.endFlight(key, id, leaseMs, signal);
    case "drop":
      return await store.dropFlight(key, id, signal);
    case "read":
      return await store.readFlight(key, actors.joined[o.actor] as string, o.from, 0, signal);
    default: {
      const never: never = o;
      return never;
    }
  }
}

/**
 * The property: every operation answers alike in both stores, and every id then reads the same.
 * `timed`: with short leases and waits (fewer runs, each a few waits long).
 */
async function checkFlightSteps(redis: StateStore, timed: boolean): Promise<void> {
  const signal = new AbortController().signal;
  let run = 0;
  const runs = timed ? TIMED_RUNS : RUNS;
  const ops: fc.Arbitrary<TimedOp> = timed ? timedOp : op;
  const property = fc.asyncProperty(
    fc.array(ops, { minLength: 1, maxLength: MAX_OPS }),
    async (ops) => {
      let now = 1_700_000_000_000;
      const memory: StateStore = new MemoryStore({ now: () => now });
      const key = `flight-property-${++run}-${crypto.randomUUID()}`;
      const ids = ACTORS.map((actor) => `${actor}-${run}-0`);
      const actors: Record<"redis" | "memory", Actors> = {
        redis: { own: [...ids], joined: [...ids] },
        memory: { own: [...ids], joined: [...ids] },
      };
      const done: string[] = [];
      for (const [n, o] of ops.entries()) {
        done.push(JSON.stringify(o));
        if (o.kind === "wait") {
          await new Promise((resolve) => setTimeout(resolve, WAIT_MS));
          now += WAIT_MS;
          continue;
        }
        if (o.kind === "claim") {
          const fresh = `${ACTORS[o.actor]}-${run}-${n}`;
          ids.push(fresh);
          actors.redis.own[o.actor] = actors.memory.own[o.actor] = fresh;
        }
        const fromRedis = await apply(redis, key, actors.redis, o, n, timed);
        const fromMemory = await apply(memory, key, actors.memory, o, n, timed);
        assert.deepEqual(fromRedis, fromMemory, `after ${done.join(", ")}`);
      }
      for (const id of ids) {
        assert.deepEqual(
          await redis.readFlight(key, id, 0, 0, signal),
          await memory.readFlight(key, id, 0, 0, signal),
          `${id} reads the flight the same after ${done.join(", ")}`,
        );
      }
    },
  );
  const limits = { interruptAfterTimeLimit: PROPERTY_LIMIT_MS, markInterruptAsFailure: true };
  const examples = timed ? TIMED_EXAMPLES : EXAMPLES;
  const details = await fc.check(property, { numRuns: runs, examples, ...limits });
  if (details.failed) {
    assert.fail(`${await fc.asyncDefaultReportMessage(details)}\n${details.errorInstance}`);
  }
  assert.equal(details.numRuns, runs);
}

const missing = redisServer.redisServerPath() === null ? redisServer.REDIS_MISSING : null;
if (missing !== null) {
  if (!required) console.log(`redis flight suite skipped: ${missing}`);
  describe("flights in Lua and in TypeScript", { skip: required ? false : missing }, () => {
    it("has a redis-server to run against (TRACEFETCH_REQUIRE_REDIS=1)", () => {
      assert.fail(`TRACEFETCH_REQUIRE_REDIS=1, but ${missing}`);
    });
  });
} else {
  describe("flights in Lua and in TypeScript", () => {
    let server: redisServer.RedisServer;
    before(async () => {
      server = await redisServer.startRedis();
    });
    after(async () => {
      await server?.stop();
    });

    it(`claim, renew, publish, end, drop and read answer alike in both (${RUNS} runs of up to ${MAX_OPS} operations from ${ACTORS.length} ids)`, async () => {
      const prefix = `tracefetch-test:${crypto.randomUUID()}:`;
      const store = new RedisStore(parseRedisUrl(server.url)!, prefix);
      try {
        await checkFlightSteps(store, false);
      } finally {
        await store.close();
      }
    });

    it(`and so they do with leases that lapse between operations (${TIMED_RUNS} runs)`, async () => {
      const prefix = `tracefetch-test:${crypto.randomUUID()}:`;
      const store = new RedisStore(parseRedisUrl(server.url)!, prefix);
      try {
        await checkFlightSteps(store, true);
      } finally {
        await store.close();
      }
    });
  });
}
