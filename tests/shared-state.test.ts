/**
 * Two gateway instances over one shared store (docs/deploy.md, "Shared state"), in this process:
 * the store is the in-process reference model, so these run everywhere without a server. The same
 * scenarios run over Redis (tests/state-redis-gateways.test.ts) and Durable Objects.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { GuardedState } from "../src/state/guarded-state.ts";
import { STORE_RETRY_MS } from "../src/protocol/state-limits.ts";
import { gateway } from "./support/gateway.ts";
import { MemoryStore } from "../src/state/memory-store.ts";
import {
  alternatingFailures,
  assertNoFallbacks,
  identicalBurst,
  type Instance,
  type Pair,
  probesAfterSuspension,
  type ScenarioProviders,
  scenarioProviders,
  sharedStateOf,
} from "./support/shared-state-scenarios.ts";
import { answer, raw, startServer, type TestServer } from "./support/servers.ts";
import { AUDIENCE, ISSUER, type KeyPair, keyPair, sign } from "./support/auth-keys.ts";
import { collect } from "./support/streams.ts";

const SECRET = "a test secret of at least 32 bytes!";

function instanceOf(app: ReturnType<typeof gateway>): Instance {
  return (path, init) => Promise.resolve(app.request(path, init));
}

describe("two instances over one shared store", () => {
  let store: MemoryStore;
  let providers: ScenarioProviders;
  let sensitive: TestServer;
  let jwks: TestServer;
  let caller: KeyPair;
  let pair: Pair;

  before(async () => {
    store = new MemoryStore();
    const started = await scenarioProviders();
    providers = started.providers;
    sensitive = await startServer(
      answer("private", "private", [{ title: "Private", locator: "https://p.example/1" }]),
    );
    caller = await keyPair("EdDSA", "ed-1");
    const signing = await keyPair("EdDSA", "gateway-1");
    jwks = await startServer(raw(200, JSON.stringify({ keys: [caller.publicJwk] })));
    const env = {
      TRACEFETCH_AUTH_JWKS_URL: jwks.url,
      TRACEFETCH_AUTH_ISSUER: ISSUER,
      TRACEFETCH_AUTH_AUDIENCE: AUDIENCE,
      TRACEFETCH_SIGNING_JWK: JSON.stringify(signing.privateJwk),
      TRACEFETCH_GATEWAY_ISSUER: "https://gateway.example",
    };
    const entries = [
      ...started.entries,
      {
        name: "private",
        endpoint: sensitive.url,
        sensitivity: "account-visible",
        auth: { type: "gateway-token" },
      },
    ];
    const make = () => {
      const clocks = { now: () => performance.now(), wall: () => Date.now() };
      const state = new GuardedState(store, { ...clocks, timeoutMs: 250, secret: SECRET });
      return instanceOf(gateway(entries, { env, ports: { state } }));
    };
    pair = { a: make(), b: make() };
  });
  after(async () => {
    for (const server of [...Object.values(providers), sensitive, jwks]) await server.close();
  });

  it("a provider failing every time is contacted at most 6 times in 10 alternating searches", async () => {
    const contacts = await alternatingFailures(pair, providers.failing);
    assert.ok(contacts <= 6, `contacted ${contacts} times`);
    assert.ok(contacts >= 5, "five failures come before any suspension");
  });

  it("once a suspension is over, 50 concurrent searches across both send exactly one probe", async () => {
    assert.equal(await probesAfterSuspension(pair, providers.waiting), 1);
  });

  it("50 identical concurrent searches split across both reach the provider once", async () => {
    assert.equal(await identicalBurst(pair, providers.slow), 1);
  });

  it("a search with a provider that is not public is never shared: each instance runs its own", async () => {
    const before = sensitive.requests.length;
    const claims = store.flightKeys.length;
    const token = await sign(caller, { sub: "alice", scope: "tracefetch:private" });
    const init = { headers: { authorization: `Bearer ${token}` } };
    const answers = await Promise.all([
      pair.a("/v1/search?q=secret&providers=private", init),
      pair.b("/v1/search?q=secret&providers=private", init),
    ]);
    assert.deepEqual(answers.map((r) => r.status), [200, 200]);
    assert.equal(sensitive.requests.length - before, 2);
    assert.equal(store.flightKeys.length, claims, "no flight of it reached the store");
  });

  it("the store sees flight keys as HMAC digests, never a query", () => {
    assert.ok(store.flightKeys.length > 0);
    for (const key of store.flightKeys) assert.match(key, /^[0-9a-f]{64}$/);
  });

  it("a streamed search on the other instance receives the leader's events and its final answer", async () => {
    const slowBefore = providers.slow.requests.length;
    const leading = pair.a("/v1/search?q=streamed&providers=slow");
    // Once the provider has A's search, A holds the flight: B's search can only join it.
    for (let i = 0; i < 1_000 && providers.slow.requests.length === slowBefore; i++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const res = await pair.b("/v1/search?q=streamed&providers=slow&stream=ndjson");
    const events = (await collect(res.body as ReadableStream<Uint8Array>, "ndjson")).map((a) =>
      a.event
    );
    await leading;
    assert.equal(providers.slow.requests.length - slowBefore, 1, "one search reached it");
    assert.deepEqual(events.map((e) => e.event), ["plan", "provider", "merged", "done"]);
    const [plan, provider, merged] = events as Array<Record<string, unknown>>;
    const decision = plan?.decision as { coalesced: boolean };
    assert.equal(decision.coalesced, true, "the plan says it joined a flight");
    assert.equal((provider?.attempt as { outcome: string }).outcome, "success");
    assert.equal((merged?.merged as Array<{ title: string }>)[0]?.title, "Slow");
  });

  it("no fallback was needed in any of these runs", async () => {
    await assertNoFallbacks(pair, "redis");
  });

  it("a store that fails fails no search: degraded with a reason, then ok again without a restart", async () => {
    store.mode = "down";
    try {
      const res = await pair.a("/v1/search?q=outage&providers=slow");
      assert.equal(res.status, 200);
      assert.equal((await res.json()).code, "ok");
      const status = await sharedStateOf(pair.a);
      assert.equal(status.state, "degraded");
      assert.equal(status.reason, "the store refused the connection");
      assert.ok(status.fallbacks > 0);
    } finally {
      store.mode = "up";
    }
    await new Promise((resolve) => setTimeout(resolve, STORE_RETRY_MS + 50));
    const res = await pair.a("/v1/search?q=back&providers=slow");
    assert.equal(res.status, 200);
    assert.equal((await sharedStateOf(pair.a)).state, "ok");
  });

  it("a store that hangs costs a search at most its timeout, and the next ones nothing", async () => {
    store.mode = "hang";
    try {
      const first = performance.now();
      const res = await pair.b("/v1/search?q=hang1&providers=slow");
      assert.equal(res.status, 200);
      const firstMs = performance.now() - first;
      const second = performance.now();
      await pair.b("/v1/search?q=hang2&providers=slow");
      const secondMs = performance.now() - second;
      assert.ok(firstMs < 300 + 250 * 2 + 500, `first search took ${firstMs} ms`);
      assert.ok(secondMs < 300 + 200, `second search took ${secondMs} ms`);
    } finally {
      store.mode = "up";
    }
  });
});
