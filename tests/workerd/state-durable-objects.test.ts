/**
 * The shared state on Durable Objects, in workerd: the contract every adapter passes
 * (tests/support/state-contract.ts), through GuardedState as the gateway runs it, against the
 * bundled worker's GatewayStateObject, with `a` and `b` in two other workers that bind its
 * namespace; a flight object that holds nothing once its flight ended, or once the alarm found its
 * leader dead; and the worker refusing to start with a Redis URL, or with the binding and no secret.
 *
 * Miniflare's proxy reaches an object's RPC methods from Node, but hands objects back as proxies
 * and errors as others, so DurableStore runs where it runs deployed: each worker beside the gateway
 * is a bridge that calls DurableStore on its binding and answers over fetch. Invariant: every case
 * ends within seconds; leases and sweeps here are a few hundred milliseconds.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import type { Miniflare } from "miniflare";
import { GuardedState } from "../../src/state/guarded-state.ts";
import { type StateStore, StoreFailure } from "../../src/state/state-store.ts";
import { assertEnvelope, manifestOf } from "../support/gateway.ts";
import { answer, startServer, type TestServer } from "../support/servers.ts";
import { stateContract } from "../support/state-contract.ts";
import { bundleEntry, GATEWAY_WORKER, startWorker } from "./miniflare.ts";

const SECRET = "test-only state secret, never deployed";
/** A flight object's sweep in the bridge's class: short, so a dead leader's alarm can be waited for. */
const SWEEP_MS = 300;
/** A dead leader's lease here: it lapses before the sweep comes. */
const LEASE_MS = 200;
/**
 * A live leader's lease: it renews every POLL_MS, but one round of the loop (a renewal and a
 * footprint) can take longer than LEASE_MS on a busy machine, which is not a dead leader.
 */
const LIVE_LEASE_MS = 2_000;
/** How long a case waits for an alarm it expects: many sweeps, on a busy machine. */
const ALARM_WAIT_MS = 5_000;
const POLL_MS = 50;
/** One store operation's time: generous, since a fallback to memory would fail the case. */
const TIMEOUT_MS = 2_000;

/** Runs DurableStore on a binding in workerd; also the gateway's class with a short sweep. */
const BRIDGE = `
import { DurableStore } from "./src/state/durable-state.ts";
import { StoreFailure } from "./src/state/state-store.ts";
import { GatewayStateObject } from "./src/runtime/state-object.ts";

export class InspectedStateObject extends GatewayStateObject {
  flightSweepMs = ${SWEEP_MS};
  async footprint() {
    const keys = [...this.ctx.storage.kv.list()].map(([key]) => key);
    return { keys, alarm: await this.ctx.storage.getAlarm() };
  }
}

export default {
  async fetch(request, env) {
    const { binding, method, args } = await request.json();
    const namespace = env[binding];
    try {
      if (method === "footprint") {
        const value = await namespace.get(namespace.idFromName(args[0])).footprint();
        return Response.json({ value });
      }
      const store = new DurableStore(namespace);
      const value = await store[method](...args, new AbortController().signal);
      return Response.json({ value: value instanceof Map ? [...value] : value ?? null });
    } catch (error) {
      return Response.json({ failure: error instanceof StoreFailure ? error.reason : String(error) });
    }
  },
};
`;

type Bridge = { fetch: (url: string, init: RequestInit) => Promise<Response> };

/** A StateStore in Node whose every call is DurableStore's, run by a bridge worker. */
function bridgeStore(worker: Bridge, binding: string): StateStore & { footprint: Footprint } {
  const call = async (method: string, args: unknown[]) => {
    const res = await worker.fetch("http://bridge.test/", {
      method: "POST",
      body: JSON.stringify({ binding, method, args }),
    });
    const body = await res.json() as { value?: unknown; failure?: string };
    if (body.failure !== undefined) throw new StoreFailure(body.failure);
    return body.value as never;
  };
  // The signal, last, stays here: an RPC call is not taken back.
  const pass = (method: string) => (...args: unknown[]) => call(method, args.slice(0, -1));
  return {
    backend: "durable_objects",
    breakers: async (names) => new Map(await call("breakers", [names])),
    stepBreaker: pass("stepBreaker"),
    probeResult: pass("probeResult"),
    leaseProbe: pass("leaseProbe"),
    storeProbeResult: pass("storeProbeResult"),
    claimFlight: pass("claimFlight"),
    renewFlight: pass("renewFlight"),
    publishFlight: pass("publishFlight"),
    endFlight: pass("endFlight"),
    dropFlight: pass("dropFlight"),
    readFlight: pass("readFlight"),
    logSearch: pass("logSearch"),
    close: () => Promise.resolve(),
    footprint: (name) => call("footprint", [name]),
  };
}

/** What an object of the bridge's class stores: its keys, and its alarm's time or null. */
type Footprint = (name: string) => Promise<{ keys: string[]; alarm: number | null }>;

const guard = (store: StateStore) =>
  new GuardedState(store, {
    timeoutMs: TIMEOUT_MS,
    secret: SECRET,
    now: () => performance.now(),
    wall: () => Date.now(),
  });

/** The object a search identity's flight lives in, named as GuardedState and DurableStore name it. */
const flightObject = (identity: string) =>
  `flight:${createHmac("sha256", SECRET).update(`flight\0${identity}`).digest("hex")}`;

const unique = (what: string) => `${what}-${Math.random().toString(36).slice(2, 10)}`;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe("shared state on Durable Objects", () => {
  let mf: Miniflare;
  let provider: TestServer;
  let manifest: string;
  // Typed by what the bridge needs: Miniflare types a Fetcher by the Workers types, not installed.
  const bridge = async (name: string) => (await mf.getWorker(name)) as unknown as Bridge;
  const stores = async (binding: string) => ({
    a: bridgeStore(await bridge("a"), binding),
    b: bridgeStore(await bridge("b"), binding),
  });

  before(async () => {
    provider = await startServer(answer("a", "a", [{ title: "A", locator: "https://a.example/" }]));
    manifest = JSON.stringify(manifestOf([{ name: "a", endpoint: provider.url }]));
    const script = await bundleEntry(BRIDGE, "state-bridge.ts");
    const beside = (name: string, inspected: Record<string, string>) => ({
      name,
      modules: true,
      script,
      compatibilityDate: "2026-04-26",
      durableObjects: {
        TRACEFETCH_STATE: {
          className: "GatewayStateObject",
          scriptName: GATEWAY_WORKER,
          useSQLite: true,
        },
        INSPECTED: { className: "InspectedStateObject", useSQLite: true, ...inspected },
      },
    });
    mf = await startWorker({
      TRACEFETCH_MANIFEST: manifest,
      TRACEFETCH_ALLOW_LOOPBACK: "1",
      TRACEFETCH_STATE_SECRET: SECRET,
    }, {
      durableObjects: { TRACEFETCH_STATE: "GatewayStateObject" },
      // `a` defines the inspected namespace, `b` binds it by name: two workers, one namespace.
      besides: [beside("a", {}), beside("b", { scriptName: "a" })],
    });
  });
  after(async () => {
    await mf?.dispose();
    await provider?.close();
  });

  stateContract({
    name: "Durable Objects of the bundled worker, two workers through GuardedState",
    shared: true,
    make: async () => {
      const { a, b } = await stores("TRACEFETCH_STATE");
      const [ga, gb] = [guard(a), guard(b)];
      return {
        a: ga,
        b: gb,
        fresh: () => guard(b),
        close: async () => {
          await ga.close();
          await gb.close();
        },
      };
    },
  });

  it("a flight's object holds nothing once the flight ended: alone, followed, or dropped", async () => {
    const { a, b } = await stores("INSPECTED");
    const [ga, gb] = [guard(a), guard(b)];
    try {
      const alone = unique("alone");
      const lead = await ga.flight(alone);
      assert.equal(lead?.kind, "lead");
      if (lead?.kind !== "lead") return;
      const running = await a.footprint(flightObject(alone));
      assert.deepEqual(running.keys, ["flight"], "the lease, under the HMAC of the identity");
      assert.notEqual(running.alarm, null, "the claim set the backstop");
      lead.emit({ n: 1 });
      await lead.end({ n: 2 });
      assert.deepEqual(await a.footprint(flightObject(alone)), { keys: [], alarm: null });

      const followed = unique("followed");
      const leader = await ga.flight(followed);
      const follower = await gb.flight(followed);
      assert.equal(leader?.kind, "lead");
      assert.equal(follower?.kind, "follow");
      if (leader?.kind !== "lead" || follower?.kind !== "follow") return;
      const seen: unknown[] = [];
      const reading = (async () => {
        for await (const e of follower.events(new AbortController().signal)) seen.push(e);
      })();
      leader.emit({ n: 1 });
      await leader.end({ n: 2 });
      await reading;
      assert.deepEqual(seen, [
        { kind: "event", event: { n: 1 } },
        { kind: "event", event: { n: 2 } },
      ]);
      assert.deepEqual(await b.footprint(flightObject(followed)), { keys: [], alarm: null });

      const dropped = unique("dropped");
      const gone = await ga.flight(dropped);
      assert.equal((await gb.flight(dropped))?.kind, "follow");
      if (gone?.kind !== "lead") return;
      await gone.end(null);
      assert.deepEqual(await a.footprint(flightObject(dropped)), { keys: [], alarm: null });
    } finally {
      await ga.close();
      await gb.close();
    }
  });

  it("the alarm deletes a flight whose leader died, and keeps one whose leader renews", async () => {
    const { a, b } = await stores("INSPECTED");
    const signal = new AbortController().signal;
    const dead = unique("dead");
    const live = unique("live");
    for (const [store, key, lease] of [[a, dead, LEASE_MS], [b, live, LIVE_LEASE_MS]] as const) {
      assert.equal((await store.claimFlight(key, "leader", lease, signal)).lead, true);
    }
    const deadline = performance.now() + ALARM_WAIT_MS;
    let renewals = 0;
    for (;;) {
      // The live flight's leader renews past several sweeps; the dead one's never does.
      assert.equal((await b.renewFlight(live, "leader", LIVE_LEASE_MS, signal)).held, true);
      renewals++;
      const left = await b.footprint(`flight:${dead}`);
      if (left.keys.length === 0 && renewals * POLL_MS > 3 * SWEEP_MS) {
        assert.equal(left.alarm, null);
        break;
      }
      assert.ok(performance.now() < deadline, `the dead flight's object still holds ${left.keys}`);
      await sleep(POLL_MS);
    }
    const kept = await a.footprint(`flight:${live}`);
    assert.deepEqual(kept.keys, ["flight"]);
    assert.ok(kept.alarm !== null, "the alarm came back for the live flight");
    assert.equal((await a.readFlight(dead, "leader", 0, 0, signal)).state, "orphaned");
    await a.dropFlight(live, "leader", signal);
  });

  it("the bundled worker searches with the binding and reports durable_objects, ok", async () => {
    const search = await mf.dispatchFetch("http://gateway.test/v1/search?q=a");
    assert.equal(search.status, 200);
    assert.equal(assertEnvelope(await search.json()).code, "ok");
    const status = await mf.dispatchFetch("http://gateway.test/v1/status");
    assert.deepEqual(assertEnvelope(await status.json()).result.shared_state, {
      backend: "durable_objects",
      state: "ok",
      fallbacks: 0,
    });
  });

  const refused = async (bindings: Record<string, string>) => {
    const worker = await startWorker(
      { TRACEFETCH_MANIFEST: manifest, TRACEFETCH_ALLOW_LOOPBACK: "1", ...bindings },
      { durableObjects: { TRACEFETCH_STATE: "GatewayStateObject" } },
    );
    try {
      const res = await worker.dispatchFetch("http://gateway.test/v1/status");
      assert.equal(res.status, 500);
      const body = assertEnvelope(await res.json());
      assert.equal(body.code, "internal_error");
      return body.error.message as string;
    } finally {
      await worker.dispose();
    }
  };

  // The cache's Redis is refused as the state's is: an operator who set it is told, not ignored.
  for (const name of ["TRACEFETCH_STATE_URL", "TRACEFETCH_CACHE_URL"]) {
    it(`${name} on Workers: every request is a 500 naming the binding instead, in one line`, async () => {
      const message = await refused({
        [name]: "redis://:hunter2@cache.internal:6379/0",
        TRACEFETCH_STATE_SECRET: SECRET,
      });
      assert.match(
        message,
        new RegExp(
          `: ${name} names a Redis, which Workers cannot reach; bind the TRACEFETCH_STATE Durable Object namespace instead`,
        ),
      );
      assert.doesNotMatch(message, /hunter2|cache\.internal|\n/);
    });
  }

  it("the TRACEFETCH_STATE binding without TRACEFETCH_STATE_SECRET: every request is a 500 naming it", async () => {
    const message = await refused({});
    assert.match(message, /the TRACEFETCH_STATE binding .*needs TRACEFETCH_STATE_SECRET/);
  });
});
