/**
 * Two gateway workers over one Durable Object namespace, as an operator deploys them (two Workers,
 * the second binding the first's TRACEFETCH_STATE namespace by `scriptName`): the shared-state
 * scenarios (tests/support/shared-state-scenarios.ts) with the figures the in-process pair
 * (tests/shared-state.test.ts) and the Redis pair (tests/state-redis-gateways.test.ts) meet, here
 * in one workerd through Miniflare with SQLite-backed objects.
 *
 * Both workers run the same bundled build with the same bindings; each has its own isolate, so
 * whatever they agree on went through the namespace. Each is reached on its own (getWorker), never
 * through a route that could pick either. Invariant: every case ends within seconds, and after()
 * leaves no workerd and no provider server running.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Miniflare } from "miniflare";
import { manifestOf } from "../support/gateway.ts";
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
} from "../support/shared-state-scenarios.ts";
import { GATEWAY_WORKER, startWorker } from "./miniflare.ts";

const SECRET = "test-only state secret, never deployed";
/** The second gateway's name: it binds the namespace GATEWAY_WORKER defines. */
const SECOND_WORKER = "second-gateway";
/**
 * A case's bound: the scenarios take a few seconds (a one-second suspension, 50-search bursts),
 * and on a loaded machine workerd's first requests compile the bundle.
 */
const CASE_MS = 30_000;
/** The store's timeout in these runs: longer than a loaded machine makes any object call. */
const STATE_TIMEOUT_MS = 2_000;

/** What reaching a worker needs: Miniflare types its Fetcher by the Workers types, not installed. */
type Reachable = { fetch: (url: string, init?: RequestInit) => Promise<Response> };

/** One worker as an Instance: its own fetch, so a request can reach no other. */
async function instanceOf(mf: Miniflare, name: string): Promise<Instance> {
  const worker = (await mf.getWorker(name)) as unknown as Reachable;
  return (path, init) => worker.fetch(`http://${name}.test${path}`, init);
}

describe("two gateway workers over one Durable Object namespace", () => {
  let mf: Miniflare | undefined;
  let providers: ScenarioProviders | undefined;
  let pair: Pair;
  let entries: Awaited<ReturnType<typeof scenarioProviders>>["entries"];

  /** Two workers over one namespace, their manifest the scenarios' with `extra` beside. */
  const startPair = (extra: Record<string, unknown> = {}) =>
    startWorker({
      TRACEFETCH_MANIFEST: JSON.stringify(manifestOf(entries, extra)),
      TRACEFETCH_ALLOW_LOOPBACK: "1",
      TRACEFETCH_DESCRIBE_PROVIDERS: "0",
      TRACEFETCH_API_DOCS: "0",
      TRACEFETCH_STATE_SECRET: SECRET,
      // These scenarios are about sharing, not the store's timeout (tests/guarded-state.test.ts):
      // on a loaded machine a fresh workerd's first object calls can take past the 250 ms default,
      // and an instance that falls back counts its callers in its own memory.
      TRACEFETCH_STATE_TIMEOUT_MS: String(STATE_TIMEOUT_MS),
    }, {
      // The gateway owns the namespace; its twin binds it by scriptName: one set of objects.
      durableObjects: { TRACEFETCH_STATE: "GatewayStateObject" },
      twin: SECOND_WORKER,
    });

  before(async () => {
    const started = await scenarioProviders();
    providers = started.providers;
    entries = started.entries;
    mf = await startPair();
    pair = { a: await instanceOf(mf, GATEWAY_WORKER), b: await instanceOf(mf, SECOND_WORKER) };
  });
  after(async () => {
    await mf?.dispose();
    for (const server of Object.values(providers ?? {})) await server.close();
  });

  it("a provider failing every time is contacted at most 6 times in 10 alternating searches", {
    timeout: CASE_MS,
  }, async () => {
    const contacts = await alternatingFailures(pair, (providers as ScenarioProviders).failing);
    assert.ok(contacts >= 5 && contacts <= 6, `contacted ${contacts} times`);
  });

  it("once a suspension is over, 50 concurrent searches across both send exactly one probe", {
    timeout: CASE_MS,
  }, async () => {
    assert.equal(await probesAfterSuspension(pair, (providers as ScenarioProviders).waiting), 1);
  });

  it("50 identical concurrent searches split across both reach the provider once", {
    timeout: CASE_MS,
  }, async () => {
    assert.equal(await identicalBurst(pair, (providers as ScenarioProviders).slow), 1);
  });

  it(
    `caller_limits.searches_per_minute: ${SEARCHES_PER_MINUTE}: 60 distinct searches across two more workers let exactly 20 through, 40 refused 429`,
    {
      timeout: CASE_MS,
    },
    async () => {
      const limited = await startPair({
        caller_limits: { searches_per_minute: SEARCHES_PER_MINUTE },
      });
      try {
        const two = {
          a: await instanceOf(limited, GATEWAY_WORKER),
          b: await instanceOf(limited, SECOND_WORKER),
        };
        const burst = await callerLimitBurst(two, "slow");
        // A fallback would explain a miscount: say so first.
        await assertNoFallbacks(two, "durable_objects");
        assert.deepEqual(burst, { passed: 20, refused: 40 });
        // The client is CF-Connecting-IP: another address is another caller, with its own limit.
        const other = await two.b("/v1/search?q=elsewhere&providers=slow", {
          headers: { "cf-connecting-ip": "203.0.113.5" },
        });
        assert.equal(other.status, 200);
        await other.body?.cancel();
      } finally {
        await limited.dispose();
      }
    },
  );

  it("no operation fell back to memory in these runs", { timeout: CASE_MS }, async () => {
    await assertNoFallbacks(pair, "durable_objects");
  });
});
