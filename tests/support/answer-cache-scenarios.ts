/**
 * What the answer cache must show through the gateway (docs/envelope.md, "Cached answers"), as
 * scenarios any two instances can be put through: one app twice (memory), two apps over one Redis.
 * Providers are real servers on 127.0.0.1 that count the searches they receive; callers carry
 * tokens, so a provider receiving gateway tokens sees whom it answers.
 */
import assert from "node:assert/strict";
import type { Handler, TestServer } from "./servers.ts";
import { answer, startServer } from "./servers.ts";
import { AUDIENCE, ISSUER, type KeyPair, keyPair, sign } from "./auth-keys.ts";
import { PROVIDER_HEALTH_VERSION } from "../../src/protocol/provider-actions.ts";
import { ADMIN_SCOPE } from "../../src/core/caller.ts";

export type App = { request: (path: string, init?: RequestInit) => Response | Promise<Response> };
export type AppPair = { a: App; b: App };

/** Searches a provider received (refresh and health are not counted). */
export const searchesAt = (server: TestServer) =>
  server.requests.filter((r) => r.body.includes('"query"')).length;

/** A provider answering one candidate per search and a healthy refresh. */
export function cachedProvider(name: string): Handler {
  const reply = answer(name, name, [{
    title: `${name} page`,
    locator: `https://${name}.example/1`,
  }]);
  return (req, res, body) => {
    if (!body.includes('"refresh"')) return reply(req, res, body);
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({
      schema_version: PROVIDER_HEALTH_VERSION,
      provider: name,
      scope: name,
      status: "ok",
      coverage: "complete",
      watermark: null,
    }));
  };
}

/** The servers and keys of one suite; `env` is what both instances are configured with. */
export type CacheWorld = {
  open: TestServer;
  failing: TestServer;
  secret: TestServer;
  caller: KeyPair;
  env: Record<string, string>;
  entries: Array<Record<string, unknown> & { name: string }>;
  close: () => Promise<void>;
};

/** `open` (public), `failing` (503) and `secret` (gateway tokens), each cached for an hour. */
export async function cacheWorld(): Promise<CacheWorld> {
  const signing = await keyPair("EdDSA", "gateway-1");
  const caller = await keyPair("EdDSA", "ed-1");
  const jwks = await startServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ keys: [caller.publicJwk] }));
  });
  const open = await startServer(cachedProvider("open"));
  const failing = await startServer((_req, res) => {
    res.writeHead(503, { "content-type": "application/json" });
    res.end("{}");
  });
  const secret = await startServer(cachedProvider("secret"));
  return {
    open,
    failing,
    secret,
    caller,
    env: {
      TRACEFETCH_AUTH_JWKS_URL: jwks.url,
      TRACEFETCH_AUTH_ISSUER: ISSUER,
      TRACEFETCH_AUTH_AUDIENCE: AUDIENCE,
      TRACEFETCH_SIGNING_JWK: JSON.stringify(signing.privateJwk),
      TRACEFETCH_GATEWAY_ISSUER: "https://gateway.example",
    },
    entries: [
      { name: "open", endpoint: open.url, cache_ttl_seconds: 3600, cost_micros: 70 },
      { name: "failing", endpoint: failing.url, cache_ttl_seconds: 3600 },
      {
        name: "secret",
        endpoint: secret.url,
        cache_ttl_seconds: 3600,
        sensitivity: "account-visible",
        auth: { type: "gateway-token" },
      },
    ],
    close: async () => {
      for (const server of [jwks, open, failing, secret]) await server.close();
    },
  };
}

// deno-lint-ignore no-explicit-any
type Body = any;

async function searchAt(app: App, path: string, token?: string): Promise<Body> {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  const res = await app.request(path, { headers });
  const body = await res.json();
  assert.ok(res.status === 200 || res.status === 502 || res.status === 503, JSON.stringify(body));
  return body;
}

/**
 * Lets the store's write, which runs after the answer, land: it takes a few milliseconds, but on a
 * 2-core machine running the Node, Deno and workerd suites at once a Redis or Durable Object write
 * has taken tens of them, so the pause leaves it five times the slowest seen.
 */
const SETTLE_MS = 250;
const settle = () => new Promise((resolve) => setTimeout(resolve, SETTLE_MS));

/**
 * A search repeated on the second instance reaches the provider once and says `cached`;
 * `max_age_seconds=0` asks the provider again; a fresh enough answer is served again.
 */
export async function repeatIsCached(pair: AppPair, world: CacheWorld): Promise<void> {
  const q = `/v1/search?q=repeat-${crypto.randomUUID()}&providers=open`;
  const before = searchesAt(world.open);
  const first = await searchAt(pair.a, q);
  assert.equal(first.result.candidates[0].cached, undefined);
  assert.deepEqual(first.result.usage, { cost_micros: 70 });
  await settle();
  const second = await searchAt(pair.b, q);
  assert.equal(searchesAt(world.open) - before, 1, "the repeat reached no provider");
  const attempt = second.result.candidates[0];
  assert.equal(attempt.cached, true);
  assert.equal(typeof attempt.age_ms, "number");
  assert.equal(attempt.candidate_count, 1);
  assert.deepEqual(second.result.merged.map((m: Body) => m.title), ["open page"]);
  assert.deepEqual(second.result.usage, { cost_micros: 0, saved_cost_micros: 70 });
  const bypass = await searchAt(pair.b, `${q}&max_age_seconds=0`);
  assert.equal(searchesAt(world.open) - before, 2, "max_age_seconds=0 asks the provider");
  assert.equal(bypass.result.candidates[0].cached, undefined);
  await settle();
  const third = await searchAt(pair.a, `${q}&max_age_seconds=3600`);
  assert.equal(third.result.candidates[0].cached, true);
  assert.equal(searchesAt(world.open) - before, 2);
}

/** A failing provider is asked every time: a failure is never served from the cache. */
export async function failureNeverCached(pair: AppPair, world: CacheWorld): Promise<void> {
  const q = `/v1/search?q=fail-${crypto.randomUUID()}&providers=failing`;
  const before = searchesAt(world.failing);
  for (const app of [pair.a, pair.b, pair.a]) {
    const body = await searchAt(app, q);
    assert.equal(body.result.candidates[0].cached, undefined);
    await settle();
  }
  assert.equal(searchesAt(world.failing) - before, 3);
}

/**
 * A provider receiving gateway tokens: alice's repeat on the same instance is cached; bob, or
 * alice with other entitlements, is asked for; alice on the other instance is asked for too (the
 * answer never left the first instance's memory).
 */
export async function privateStaysWithItsCaller(pair: AppPair, world: CacheWorld) {
  const q = `/v1/search?q=mine-${crypto.randomUUID()}&providers=secret`;
  // An account-visible provider needs its scope granted (docs/security.md).
  const scope = "tracefetch:secret";
  const alice = await sign(world.caller, { sub: "alice", scope });
  const aliceWide = await sign(world.caller, { sub: "alice", scope: `${scope} tracefetch:team` });
  const bob = await sign(world.caller, { sub: "bob", scope });
  const before = searchesAt(world.secret);
  await searchAt(pair.a, q, alice);
  await settle();
  const again = await searchAt(pair.a, q, alice);
  assert.equal(again.result.candidates[0].cached, true, "alice's repeat is cached");
  assert.equal(searchesAt(world.secret) - before, 1);
  const asBob = await searchAt(pair.a, q, bob);
  assert.equal(asBob.result.candidates[0].cached, undefined, "bob is never served alice's");
  const wide = await searchAt(pair.a, q, aliceWide);
  assert.equal(wide.result.candidates[0].cached, undefined, "other entitlements: not alice's");
  assert.equal(searchesAt(world.secret) - before, 3);
  return {
    elsewhere: await searchAt(pair.b, q, alice),
    contacts: () => searchesAt(world.secret) - before,
  };
}

/** A refresh of `open` on the second instance drops its answers on the first. */
export async function refreshDrops(pair: AppPair, world: CacheWorld): Promise<void> {
  const q = `/v1/search?q=refresh-${crypto.randomUUID()}&providers=open`;
  const admin = await sign(world.caller, { sub: "ops", scope: ADMIN_SCOPE });
  const before = searchesAt(world.open);
  await searchAt(pair.a, q);
  await settle();
  assert.equal((await searchAt(pair.a, q)).result.candidates[0].cached, true);
  const res = await pair.b.request("/v1/refresh", {
    method: "POST",
    headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
    body: JSON.stringify({ provider: "open" }),
  });
  assert.equal(res.status, 200, await res.clone().text());
  await res.body?.cancel();
  const after = await searchAt(pair.a, q);
  assert.equal(after.result.candidates[0].cached, undefined, "the refresh dropped it");
  assert.equal(searchesAt(world.open) - before, 2);
}
