/**
 * Caller limits (docs/envelope.md, "Caller limits") on one instance: who a caller is (a token's
 * `sub`, else the client address behind TRACEFETCH_TRUSTED_PROXIES), what counts (searches over
 * GET, POST and MCP, and expands) and what never does (status, the JWKS, the page), and the 429
 * a caller past its limit gets. Two instances over Redis and over Durable Objects are in
 * tests/state-redis-gateways.test.ts and tests/workerd/state-durable-objects-gateways.test.ts.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createGateway } from "../src/http/mod.ts";
import { callerKey } from "../src/gateway/caller-limits.ts";
import { GuardedState } from "../src/state/guarded-state.ts";
import { answer, raw, startServer, type TestServer } from "./support/servers.ts";
import { assertEnvelope, manifestOf, runtimePorts, settingsFor } from "./support/gateway.ts";
import { AUDIENCE, ISSUER, type KeyPair, keyPair, sign } from "./support/auth-keys.ts";
import { MemoryStore } from "../src/state/memory-store.ts";
import { validateManifest } from "../src/protocol/validate-manifest.ts";
import {
  MAX_CALLER_COST_MICROS_PER_DAY,
  MAX_CALLER_SEARCHES_PER_MINUTE,
} from "../src/protocol/limits.ts";
import { until } from "./support/until.ts";

/** The limit these gateways set: small, so a case reaches it in a few requests. */
const LIMIT = 3;
/** The trusted proxy's address: X-Forwarded-For is read only from it. */
const PROXY = "10.0.0.1";
/** Which peer a request comes from, as the test's port reads it. */
const PEER_HEADER = "x-test-peer";

describe("caller limits on one gateway", () => {
  let provider: TestServer;
  let jwks: TestServer;
  let key: KeyPair;
  let limited: ReturnType<typeof createGateway>;
  let unlimited: ReturnType<typeof createGateway>;
  let store: MemoryStore;

  const build = (extra: Record<string, unknown>, state?: GuardedState) =>
    createGateway(
      settingsFor(
        manifestOf([{ name: "open", endpoint: provider.url }], extra),
        {
          TRACEFETCH_AUTH_JWKS_URL: jwks.url,
          TRACEFETCH_AUTH_ISSUER: ISSUER,
          TRACEFETCH_AUTH_AUDIENCE: AUDIENCE,
          TRACEFETCH_TRUSTED_PROXIES: `${PROXY}/32`,
        },
        { describeProviders: false, allowLoopback: true },
      ),
      {
        ...runtimePorts,
        peerAddress: (request) => request.headers.get(PEER_HEADER),
        ...(state === undefined ? {} : { state }),
      },
    );

  before(async () => {
    key = await keyPair("EdDSA", "ed-1");
    jwks = await startServer(raw(200, JSON.stringify({ keys: [key.publicJwk] })));
    provider = await startServer(
      answer("open", "open", [{ title: "Open", locator: "https://open.example/1" }]),
    );
    store = new MemoryStore();
    const shared = new GuardedState(store, {
      timeoutMs: 1_000,
      secret: "a test secret of at least 32 bytes!",
      now: () => performance.now(),
      wall: () => Date.now(),
    });
    limited = build({ caller_limits: { searches_per_minute: LIMIT } }, shared);
    unlimited = build({});
  });
  after(async () => {
    await provider.close();
    await jwks.close();
  });

  let n = 0;
  /** A search from `peer` with these headers: its status and envelope. */
  const searchFrom = async (
    app: ReturnType<typeof createGateway>,
    peer: string,
    headers: Record<string, string> = {},
  ) => {
    const res = await app.request(`/v1/search?q=limit${++n}&providers=open`, {
      headers: { [PEER_HEADER]: peer, ...headers },
    });
    return { res, body: assertEnvelope(await res.json()) };
  };
  const statuses = async (
    count: number,
    peer: string,
    headers: Record<string, string> = {},
  ) => {
    const out: number[] = [];
    for (let i = 0; i < count; i++) out.push((await searchFrom(limited, peer, headers)).res.status);
    return out;
  };

  it("a client gets its limit, then 429 rate_limited naming its own limit; another client is not affected", async () => {
    assert.deepEqual(await statuses(LIMIT, "192.0.2.1"), [200, 200, 200]);
    const { res, body } = await searchFrom(limited, "192.0.2.1");
    assert.equal(res.status, 429);
    assert.equal(body.code, "rate_limited");
    assert.equal(body.action, "retry");
    assert.equal(body.retryable, true);
    assert.ok(body.retry_after_ms > 0 && body.retry_after_ms <= 60_000);
    assert.equal(res.headers.get("retry-after"), String(Math.ceil(body.retry_after_ms / 1000)));
    assert.match(body.error.message, /your own limit of 3 searches a minute/);
    assert.match(body.error.message, /caller_limits\.searches_per_minute/);
    assert.deepEqual(await statuses(1, "192.0.2.2"), [200]);
  });

  it("a POST search counts as a GET one does", async () => {
    assert.deepEqual(await statuses(2, "192.0.2.3"), [200, 200]);
    const res = await limited.request("/v1/search", {
      method: "POST",
      headers: { [PEER_HEADER]: "192.0.2.3", "content-type": "application/json" },
      body: JSON.stringify({ query: "posted", providers: ["open"] }),
    });
    assert.equal(res.status, 200);
    assert.deepEqual(await statuses(1, "192.0.2.3"), [429]);
  });

  it("an expand counts as a search, and is refused as one past the limit", async () => {
    const expand = () =>
      limited.request("/v1/expand", {
        method: "POST",
        headers: { [PEER_HEADER]: "192.0.2.4", "content-type": "application/json" },
        body: JSON.stringify({ provider: "open", locator: "https://open.example/1" }),
      });
    assert.deepEqual(await statuses(2, "192.0.2.4"), [200, 200]);
    assert.notEqual((await expand()).status, 429);
    const refused = await expand();
    assert.equal(refused.status, 429);
    const body = assertEnvelope(await refused.json());
    assert.equal(body.command, "expand");
    assert.equal(body.code, "rate_limited");
  });

  it("an MCP search counts against the same caller", async () => {
    assert.deepEqual(await statuses(2, "192.0.2.5"), [200, 200]);
    const call = (id: number) =>
      limited.request("/mcp", {
        method: "POST",
        headers: {
          [PEER_HEADER]: "192.0.2.5",
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id,
          method: "tools/call",
          params: { name: "search", arguments: { query: `mcp${id}`, providers: ["open"] } },
        }),
      });
    assert.match(await (await call(1)).text(), /"code":"ok"/);
    assert.match(await (await call(2)).text(), /rate_limited/);
  });

  it("a token's sub is the caller, wherever it comes from; the address without it is another", async () => {
    const token = await sign(key, { sub: "carol" });
    const bearer = { authorization: `Bearer ${token}` };
    assert.deepEqual(await statuses(2, "192.0.2.6", bearer), [200, 200]);
    assert.deepEqual(await statuses(2, "192.0.2.7", bearer), [200, 429]);
    assert.deepEqual(await statuses(1, "192.0.2.6"), [200]);
    assert.notEqual(
      callerKey({ kind: "anonymous" }, "carol"),
      callerKey(
        { kind: "token", subject: "carol", scopes: new Set() },
        "192.0.2.6",
      ),
    );
  });

  it("X-Forwarded-For names the client behind a trusted proxy only", async () => {
    const behind = { "x-forwarded-for": "198.51.100.9" };
    assert.deepEqual(await statuses(LIMIT, PROXY, behind), [200, 200, 200]);
    // The same proxy for another client: that client's own log.
    assert.deepEqual(await statuses(1, PROXY, { "x-forwarded-for": "198.51.100.10" }), [200]);
    assert.deepEqual(await statuses(1, PROXY, behind), [429]);
    // From a peer that is no proxy, the header names no one: the peer is the client.
    assert.deepEqual(await statuses(LIMIT, "192.0.2.8", behind), [200, 200, 200]);
  });

  it("status, the JWKS and the page are never counted nor refused", async () => {
    assert.deepEqual(await statuses(LIMIT, "192.0.2.9"), [200, 200, 200]);
    for (const path of ["/v1/status", "/.well-known/jwks.json", "/"]) {
      const res = await limited.request(path, { headers: { [PEER_HEADER]: "192.0.2.9" } });
      await res.body?.cancel();
      assert.notEqual(res.status, 429, path);
    }
  });

  it("the store reads callers only as HMAC digests", () => {
    assert.ok(store.logKeys.length > 0);
    for (const logged of store.logKeys) assert.match(logged, /^[0-9a-f]{64}$/);
  });

  it("without caller_limits no search is ever refused for its caller", async () => {
    for (let i = 0; i < LIMIT + 2; i++) {
      assert.equal((await searchFrom(unlimited, "192.0.2.10")).res.status, 200);
    }
  });
});

describe("caller_limits in the manifest", () => {
  const manifest = (limits: unknown) => ({
    ...manifestOf([{ name: "exa" }]),
    caller_limits: limits,
  });
  const issues = (limits: unknown) => {
    const result = validateManifest(manifest(limits), { allowLoopback: false });
    return result.ok ? [] : result.issues.map(({ field, message }) => `${field}: ${message}`);
  };

  it("takes each limit from 1 to its maximum, or nothing", () => {
    const fine = [
      {},
      { searches_per_minute: 1 },
      { searches_per_minute: 1_000 },
      { cost_micros_per_day: 1, searches_per_minute: 20 },
    ];
    for (const limits of fine) {
      assert.deepEqual(issues(limits), []);
    }
    const accepted = validateManifest(manifest({ searches_per_minute: 20 }), {
      allowLoopback: false,
    });
    assert.deepEqual(accepted.ok && accepted.manifest.caller_limits, { searches_per_minute: 20 });
  });

  it("refuses 0, a fraction, more than its maximum, and an unknown field with its likely name", () => {
    assert.equal(issues({ searches_per_minute: 0 }).length, 1);
    assert.equal(issues({ searches_per_minute: 2.5 }).length, 1);
    assert.equal(issues({ searches_per_minute: MAX_CALLER_SEARCHES_PER_MINUTE + 1 }).length, 1);
    assert.equal(issues({ cost_micros_per_day: 0 }).length, 1);
    assert.equal(issues({ cost_micros_per_day: MAX_CALLER_COST_MICROS_PER_DAY + 1 }).length, 1);
    const [unknown] = issues({ search_per_minute: 20 });
    assert.match(unknown ?? "", /^caller_limits\.search_per_minute: .*searches_per_minute/);
  });
});

describe("caller_limits.cost_micros_per_day on one gateway, in its own memory", () => {
  let dear: TestServer;
  let free: TestServer;
  let app: ReturnType<typeof createGateway>;

  before(async () => {
    dear = await startServer(
      answer("dear", "dear", [{ title: "D", locator: "https://d.example/" }]),
    );
    free = await startServer(
      answer("free", "free", [{ title: "F", locator: "https://f.example/" }]),
    );
    app = createGateway(
      settingsFor(
        manifestOf([
          { name: "dear", endpoint: dear.url, cost_micros: 40 },
          { name: "free", endpoint: free.url },
        ], { caller_limits: { cost_micros_per_day: 100 } }),
        {},
        { describeProviders: false, allowLoopback: true },
      ),
      runtimePorts,
    );
  });
  after(async () => {
    await dear.close();
    await free.close();
  });

  const searchOf = async (providers: string, q: string) => {
    const res = await app.request(`/v1/search?q=${q}&providers=${providers}`);
    return { res, body: assertEnvelope(await res.json()) };
  };

  it("charges each search its plan's declared cost: within 100 micros a day, two at 40 and a free one", async () => {
    assert.equal((await searchOf("dear", "one")).res.status, 200);
    assert.equal((await searchOf("dear", "two")).res.status, 200);
    const { res, body } = await searchOf("dear", "three");
    assert.equal(res.status, 429);
    assert.equal(body.code, "rate_limited");
    assert.match(body.error.message, /\(40 micros\) would take you past your own limit of 100/);
    assert.match(body.error.message, /caller_limits\.cost_micros_per_day/);
    // Its cost left with its minute, a day after it was admitted.
    assert.ok(body.retry_after_ms > 86_340_000 && body.retry_after_ms <= 86_460_000);
    assert.equal((await searchOf("free", "four")).res.status, 200, "a free search still fits");
    const expand = await app.request("/v1/expand", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ provider: "dear", locator: "https://d.example/" }),
    });
    assert.equal(expand.status, 429, "an expand costs what a search of its provider does");
    await expand.body?.cancel();
  });
});

describe("caller_limits and the instance's own load", () => {
  let held: TestServer;
  let app: ReturnType<typeof createGateway>;
  let releaseHeld = () => {};

  before(async () => {
    const ok = answer("held", "held", [{ title: "H", locator: "https://h.example/" }]);
    // The first search waits until the test lets it go, holding the instance's one slot.
    let first = true;
    held = await startServer((req, res, body) => {
      if (!first) return ok(req, res, body);
      first = false;
      releaseHeld = () => {
        releaseHeld = () => {};
        void ok(req, res, body);
      };
    });
    app = createGateway(
      settingsFor(
        manifestOf([{ name: "held", endpoint: held.url }], {
          caller_limits: { searches_per_minute: LIMIT },
        }),
        {},
        { describeProviders: false, allowLoopback: true, maxInflight: 1 },
      ),
      runtimePorts,
    );
  });
  after(async () => {
    releaseHeld();
    await held.close();
  });

  const searchOf = async (q: string) => {
    const res = await app.request(`/v1/search?q=${q}&providers=held`);
    return { res, body: assertEnvelope(await res.json()) };
  };

  it("a search refused 429 overloaded is not counted against its caller", async () => {
    const holding = searchOf("holding");
    await until(() => held.requests.length > 0, "the holding search to reach its provider");
    for (const q of ["shed1", "shed2", "shed3"]) {
      const { res, body } = await searchOf(q);
      assert.equal(res.status, 429);
      assert.equal(body.code, "overloaded");
    }
    releaseHeld();
    assert.equal((await holding).res.status, 200);
    // The holding search was the caller's first of LIMIT (3): two more fit, the fourth does not.
    assert.equal((await searchOf("after1")).res.status, 200);
    assert.equal((await searchOf("after2")).res.status, 200);
    const { res, body } = await searchOf("after3");
    assert.equal(res.status, 429);
    assert.equal(body.code, "rate_limited");
  });
});

describe("caller_limits and the instance's own load, in a burst", () => {
  let provider: TestServer;
  let app: ReturnType<typeof createGateway>;

  before(async () => {
    // Answers after a moment, so the burst's first search still holds the one slot when the
    // others arrive.
    const ok = answer("slow", "slow", [{ title: "S", locator: "https://s.example/" }]);
    provider = await startServer((req, res, body) => {
      setTimeout(() => void ok(req, res, body), 50);
    });
    app = createGateway(
      settingsFor(
        manifestOf([{ name: "slow", endpoint: provider.url }], {
          caller_limits: { searches_per_minute: 5 },
        }),
        { TRACEFETCH_MAX_INFLIGHT: "1" },
        { describeProviders: false, allowLoopback: true },
      ),
      runtimePorts,
    );
  });
  after(async () => {
    await provider.close();
  });

  const searchOf = async (q: string) => {
    const res = await app.request(`/v1/search?q=${q}&providers=slow`);
    return { status: res.status, code: assertEnvelope(await res.json()).code };
  };

  it("a burst of 8 with one slot, then searches one at a time: exactly 5 get through", async () => {
    const burst = await Promise.all(Array.from({ length: 8 }, (_, i) => searchOf(`burst${i}`)));
    assert.deepEqual(
      burst.map((a) => a.code).sort(),
      ["ok", ...Array(7).fill("overloaded")],
      "one search holds the slot; the others are shed before they are counted",
    );
    const after: { status: number; code: string }[] = [];
    for (let i = 0; i < 6; i++) after.push(await searchOf(`after${i}`));
    assert.deepEqual(after.map((a) => a.code), [
      "ok",
      "ok",
      "ok",
      "ok",
      "rate_limited",
      "rate_limited",
    ]);
    assert.equal(provider.requests.length, 5, "exactly 5 searches reached the provider");
  });
});
