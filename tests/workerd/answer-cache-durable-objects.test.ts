/**
 * The answer cache shared by two gateway workers over one Durable Object namespace (docs/deploy.md,
 * "The answer cache"): the scenarios the Redis pair meets (tests/support/answer-cache-scenarios.ts),
 * here in one workerd through Miniflare, the second worker binding the first's TRACEFETCH_STATE
 * namespace by `scriptName`. Each worker has its own isolate, so an answer one finds that the other
 * stored went through a `cache:<provider>` object. Invariant: after() leaves no workerd and no
 * provider server running.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Miniflare } from "miniflare";
import { manifestOf } from "../support/gateway.ts";
import {
  type App,
  type AppPair,
  type CacheWorld,
  cacheWorld,
  failureNeverCached,
  privateStaysWithItsCaller,
  refreshDrops,
  repeatIsCached,
} from "../support/answer-cache-scenarios.ts";
import { sharedStateOf } from "../support/shared-state-scenarios.ts";
import { bundleEntry, GATEWAY_WORKER, startWorker } from "./miniflare.ts";

const SECRET = "test-only state secret, never deployed";
const SECOND_WORKER = "second-gateway";
/** A case's bound: workerd's first requests compile the bundle on a loaded machine. */
const CASE_MS = 30_000;

/** How long a case waits for an alarm it expects: many sweeps, on a busy machine. */
const ALARM_WAIT_MS = 5_000;
/**
 * The lapsing answer's TTL: long enough to be seen stored after two more calls on a busy machine
 * as it is on an idle one, and short against ALARM_WAIT_MS.
 */
const SHORT_TTL_MS = 1_500;

/** Calls a cache object's `answers` and reads what it stores, for the alarm's case. */
const BRIDGE = `
import { GatewayStateObject } from "./src/runtime/state-object.ts";

export class InspectedStateObject extends GatewayStateObject {
  async footprint() {
    const keys = [...this.ctx.storage.kv.list()].map(([key]) => key);
    return { keys, alarm: await this.ctx.storage.getAlarm() };
  }
}

export default {
  async fetch(request, env) {
    const { name, ask } = await request.json();
    const object = env.INSPECTED.get(env.INSPECTED.idFromName(name));
    return Response.json(ask === null ? await object.footprint() : await object.answers(ask));
  },
};
`;

type Reachable = { fetch: (url: string, init?: RequestInit) => Promise<Response> };

/** One worker as an App: its own fetch, so a request can reach no other. */
async function appOf(mf: Miniflare, name: string): Promise<App> {
  const worker = (await mf.getWorker(name)) as unknown as Reachable;
  return { request: (path, init) => worker.fetch(`http://${name}.test${path}`, init) };
}

describe("the answer cache of two workers over one Durable Object namespace", () => {
  let world: CacheWorld;
  let mf: Miniflare | undefined;
  let pair: AppPair;

  before(async () => {
    world = await cacheWorld();
    mf = await startWorker({
      ...world.env,
      TRACEFETCH_MANIFEST: JSON.stringify(manifestOf(world.entries)),
      TRACEFETCH_ALLOW_LOOPBACK: "1",
      TRACEFETCH_DESCRIBE_PROVIDERS: "0",
      TRACEFETCH_API_DOCS: "0",
      TRACEFETCH_STATE_SECRET: SECRET,
    }, {
      durableObjects: { TRACEFETCH_STATE: "GatewayStateObject" },
      twin: SECOND_WORKER,
    });
    pair = { a: await appOf(mf, GATEWAY_WORKER), b: await appOf(mf, SECOND_WORKER) };
  });
  after(async () => {
    await mf?.dispose();
    await world?.close();
  });

  it("a search repeated on the second worker reaches the provider once and says cached", {
    timeout: CASE_MS,
  }, () => repeatIsCached(pair, world));

  it("a failing answer is never served from the cache, on either worker", {
    timeout: CASE_MS,
  }, () => failureNeverCached(pair, world));

  it("a token provider's answer stays in its isolate: not served to another sub or worker", {
    timeout: CASE_MS,
  }, async () => {
    const { elsewhere, contacts } = await privateStaysWithItsCaller(pair, world);
    assert.equal(elsewhere.result.candidates[0].cached, undefined, "not in the other's memory");
    assert.equal(contacts(), 4);
  });

  it("a refresh on one worker drops the provider's cached answers on the other", {
    timeout: CASE_MS,
  }, () => refreshDrops(pair, world));

  it("the shared state stayed on the objects throughout", { timeout: CASE_MS }, async () => {
    for (const app of [pair.a, pair.b]) {
      const instance = (path: string, init?: RequestInit) =>
        Promise.resolve(app.request(path, init));
      assert.deepEqual(await sharedStateOf(instance), {
        backend: "durable_objects",
        state: "ok",
        fallbacks: 0,
      });
    }
  });
});

describe("a provider's cache object in workerd", () => {
  let mf: Miniflare | undefined;
  // deno-lint-ignore no-explicit-any
  let call: (name: string, ask: unknown) => Promise<any>;

  before(async () => {
    mf = await startWorker({ TRACEFETCH_STATE_SECRET: SECRET }, {
      durableObjects: { TRACEFETCH_STATE: "GatewayStateObject" },
      besides: [{
        name: "bridge",
        modules: true,
        script: await bundleEntry(BRIDGE, "cache-bridge.ts"),
        compatibilityDate: "2026-04-26",
        durableObjects: { INSPECTED: { className: "InspectedStateObject", useSQLite: true } },
      }],
    });
    const bridge = (await mf.getWorker("bridge")) as unknown as Reachable;
    call = async (name, ask) => {
      const res = await bridge.fetch("http://bridge.test/", {
        method: "POST",
        body: JSON.stringify({ name, ask }),
      });
      return await res.json();
    };
  });
  after(async () => {
    await mf?.dispose();
  });

  it("the alarm deletes lapsed answers and keeps the generation for the answers to come", {
    timeout: CASE_MS,
  }, async () => {
    const name = "cache:alarmed";
    const { generation } = await call(name, { op: "lookup", digest: "" });
    const store = (digest: string, ttlMs: number) =>
      call(name, { op: "store", generation, digest, text: "{}", ttlMs });
    await store("short", SHORT_TTL_MS);
    await store("long", 600_000);
    const stored = await call(name, null);
    assert.deepEqual(stored.keys.sort(), ["answer:long", "answer:short", "generation"]);
    const deadline = performance.now() + ALARM_WAIT_MS;
    let left = stored;
    while (left.keys.includes("answer:short") && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      left = await call(name, null);
    }
    assert.deepEqual(left.keys.sort(), ["answer:long", "generation"]);
    assert.ok(left.alarm !== null, "the alarm came back for what is left");
    assert.equal((await call(name, { op: "lookup", digest: "long" })).found.text, "{}");
    assert.equal((await call(name, { op: "lookup", digest: "long" })).generation, generation);
  });
});
