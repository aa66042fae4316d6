/**
 * Coalescing (docs/envelope.md, "Coalescing"): identical searches in flight share one fan-out,
 * each caller still gets its own envelope, request id and stream, and only the last caller
 * leaving cancels the provider calls. Providers are real servers on 127.0.0.1 that answer after
 * a delay, so the searches overlap.
 */
import { after, afterEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createGateway } from "../src/http/mod.ts";
import { listen, type Listening } from "../src/runtime/node-listen.ts";
import { assertEnvelope, gateway, manifestOf, settingsFor } from "./support/gateway.ts";
import { answer, type Handler, raw, startServer, type TestServer } from "./support/servers.ts";
import { collect } from "./support/streams.ts";
import { AUDIENCE, ISSUER, type KeyPair, keyPair, sign } from "./support/auth-keys.ts";
import { until } from "./support/until.ts";

/** Long enough for every search of a test to arrive while the first is still in flight. */
const DELAY_MS = 200;

/** Answers one healthy candidate after `ms`. */
function slow(name: string, ms = DELAY_MS): Handler {
  const reply = answer(name, name, [{
    title: `${name} page`,
    locator: `https://${name}.example/1`,
  }]);
  return (req, res, body) => {
    setTimeout(() => void reply(req, res, body), ms);
  };
}

/** `app.request`, awaited as a promise whatever it returns. */
const ask =
  (app: { request: (path: string, init?: RequestInit) => Response | Promise<Response> }) =>
  (path: string, init?: RequestInit): Promise<Response> => Promise.resolve(app.request(path, init));

/** Search requests a provider received (anything else it may be asked is not counted). */
const searches = (server: TestServer) =>
  server.requests.filter((r) => r.body.includes('"query"')).length;

const servers: TestServer[] = [];
async function provider(handler: Handler): Promise<TestServer> {
  const server = await startServer(handler);
  servers.push(server);
  return server;
}
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

describe("coalescing: identical searches in flight share one fan-out", () => {
  it("100 identical concurrent searches all answer 200 with their own request ids and cause exactly one request per provider", async () => {
    const alpha = await provider(slow("alpha"));
    const beta = await provider(slow("beta"));
    const app = gateway([{ name: "alpha", endpoint: alpha.url }, {
      name: "beta",
      endpoint: beta.url,
    }]);
    const answers = await Promise.all(
      Array.from({ length: 100 }, async (_, i) => {
        const res = await app.request("/v1/search?q=shared+question", {
          headers: { "x-request-id": `caller-${i}` },
        });
        return { status: res.status, body: assertEnvelope(await res.json()) };
      }),
    );
    assert.deepEqual(answers.map((a) => a.status), Array(100).fill(200));
    assert.deepEqual(
      answers.map((a) => a.body.request_id),
      Array.from({ length: 100 }, (_, i) => `caller-${i}`),
    );
    for (const a of answers) assert.equal(a.body.result.merged.length, 2);
    assert.deepEqual([searches(alpha), searches(beta)], [1, 1]);
    const joined = answers.filter((a) => a.body.result.decision.coalesced === true).length;
    const started = answers.filter((a) => a.body.result.decision.coalesced === false).length;
    assert.deepEqual([started, joined], [1, 99]);
  });

  it("a search that arrives after the shared fan-out ended starts its own: coalescing is not a cache", async () => {
    const alpha = await provider(slow("alpha", 20));
    const app = gateway([{ name: "alpha", endpoint: alpha.url }]);
    for (let i = 0; i < 2; i++) {
      const body = assertEnvelope(await (await app.request("/v1/search?q=again")).json());
      assert.equal(body.result.decision.coalesced, false);
    }
    assert.equal(searches(alpha), 2);
  });

  it("a different view shares the fan-out; a different timeout_ms does not", async () => {
    const alpha = await provider(slow("alpha"));
    const app = gateway([{ name: "alpha", endpoint: alpha.url }]);
    const post = (body: Record<string, unknown>) =>
      ask(app)("/v1/search", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: "views", ...body }),
      }).then(async (res) => ({ status: res.status, body: assertEnvelope(await res.json()) }));

    const [full, merged] = await Promise.all([post({}), post({ view: "merged" })]);
    assert.deepEqual([full.status, merged.status], [200, 200]);
    assert.ok(Array.isArray(full.body.result.candidates));
    assert.equal(merged.body.result.candidates, undefined);
    assert.equal(searches(alpha), 1);

    await Promise.all([post({ timeout_ms: 5_000 }), post({ timeout_ms: 6_000 })]);
    assert.equal(searches(alpha), 3);
  });

  it("followers take no in-flight slot: with maxInflight 1, 10 identical concurrent searches all succeed", async () => {
    const alpha = await provider(slow("alpha"));
    const app = gateway([{ name: "alpha", endpoint: alpha.url }], { settings: { maxInflight: 1 } });
    const statuses = await Promise.all(
      Array.from({ length: 10 }, () => ask(app)("/v1/search?q=one+slot").then((r) => r.status)),
    );
    assert.deepEqual(statuses, Array(10).fill(200));
    assert.equal(searches(alpha), 1);
    // A different search still finds the only slot taken while the shared one runs.
    const [first, other] = await Promise.all([
      app.request("/v1/search?q=one+slot"),
      new Promise((r) => setTimeout(r, 50)).then(() => app.request("/v1/search?q=another")),
    ]);
    assert.deepEqual([first.status, other.status], [200, 429]);
  });

  it("a streamed follower that joins late receives the provider events already emitted, then the rest and done", async () => {
    const fast = await provider(slow("fast", 20));
    const late = await provider(slow("late", 600));
    const app = gateway([{ name: "fast", endpoint: fast.url }, {
      name: "late",
      endpoint: late.url,
    }]);
    const streamed = (id: string) =>
      ask(app)("/v1/search?q=streams&stream=ndjson", { headers: { "x-request-id": id } })
        .then((res) => collect(res.body as ReadableStream<Uint8Array>, "ndjson"));
    const leader = streamed("leader");
    await until(() => searches(fast) === 1 && searches(late) === 1, "the fan-out to start");
    await new Promise((resolve) => setTimeout(resolve, 200));
    const follower = await streamed("follower");
    const kinds = follower.map((f) => f.event.event).filter((e) => e !== "heartbeat");
    assert.deepEqual(kinds, ["plan", "provider", "provider", "merged", "done"]);
    for (const f of follower) assert.equal(f.event.request_id, "follower");
    const providers = follower.filter((f) => f.event.event === "provider");
    assert.deepEqual(
      providers.map((f) => (f.event.attempt as { provider: string }).provider),
      ["fast", "late"],
    );
    // The first provider event was already emitted when the follower joined: it arrives at once.
    assert.ok((providers[1]?.at ?? 0) - (providers[0]?.at ?? 0) > 100);
    const plan = follower[0]?.event.decision as { coalesced: boolean };
    assert.equal(plan.coalesced, true);
    const done = follower.at(-1)?.event as unknown as {
      result: { decision: { coalesced: boolean } };
    };
    assert.equal(done.result.decision.coalesced, true);
    const first = await leader;
    assert.equal(first.at(-1)?.event.event, "done");
    assert.equal(first.at(-1)?.event.request_id, "leader");
    assert.deepEqual([searches(fast), searches(late)], [1, 1]);
  });
});

describe("coalescing over a real listener: who leaves and who stays", () => {
  let server: Listening | null = null;
  after(async () => {
    await server?.close();
  });

  it("the first caller disconnecting does not abort the fan-out the others wait on", async () => {
    // Slow enough that the second caller surely joins before the first leaves, on a busy machine.
    const alpha = await provider(slow("alpha", 1_500));
    await server?.close();
    server = await listen(gateway([{ name: "alpha", endpoint: alpha.url }]).fetch, "127.0.0.1", 0);
    const url = `http://127.0.0.1:${server.port}/v1/search?q=leaving`;
    const leaving = new AbortController();
    const first = fetch(url, { signal: leaving.signal }).then(
      (res) => res.text(),
      (error: Error) => error.name,
    );
    await until(() => searches(alpha) === 1, "the fan-out to start");
    const staying = fetch(url).then(async (res) => ({
      status: res.status,
      body: assertEnvelope(await res.json()),
    }));
    await new Promise((resolve) => setTimeout(resolve, 500));
    leaving.abort();
    assert.equal(await first, "AbortError");
    const { status, body } = await staying;
    assert.equal(status, 200);
    assert.equal(body.result.candidates[0].outcome, "success");
    assert.equal(body.result.decision.coalesced, true);
    assert.equal(searches(alpha), 1);
  });

  it("every caller leaving aborts the shared fan-out: the provider sees its socket closed", async () => {
    let closed = 0;
    const hanging = await provider((req) => {
      req.socket.on("close", () => closed++);
    });
    await server?.close();
    server = await listen(
      gateway([{ name: "hang", endpoint: hanging.url, timeout_seconds: 30 }]).fetch,
      "127.0.0.1",
      0,
    );
    const url = `http://127.0.0.1:${server.port}/v1/search?q=everyone+leaves`;
    const callers = [new AbortController(), new AbortController()];
    const asked = callers.map((c) => fetch(url, { signal: c.signal }).catch(() => null));
    await until(() => searches(hanging) === 1, "the fan-out to start");
    await new Promise((resolve) => setTimeout(resolve, 100));
    callers[0]?.abort();
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(closed, 0, "one caller left while another waits: the provider call goes on");
    callers[1]?.abort();
    await Promise.all(asked);
    await until(() => closed === 1, "the provider's socket to close");
    assert.equal(searches(hanging), 1);
  });
});

describe("coalescing never crosses callers the providers could tell apart", () => {
  let signing: KeyPair, caller: KeyPair, jwks: TestServer;
  after(async () => {
    await jwks?.close();
  });

  async function tokenGateway(entries: Array<Record<string, unknown> & { name: string }>) {
    signing ??= await keyPair("EdDSA", "gateway-1");
    caller ??= await keyPair("EdDSA", "ed-1");
    jwks ??= await startServer(raw(200, JSON.stringify({ keys: [caller.publicJwk] })));
    return createGateway(settingsFor(manifestOf(entries), {
      TRACEFETCH_AUTH_JWKS_URL: jwks.url,
      TRACEFETCH_AUTH_ISSUER: ISSUER,
      TRACEFETCH_AUTH_AUDIENCE: AUDIENCE,
      TRACEFETCH_SIGNING_JWK: JSON.stringify(signing.privateJwk),
      TRACEFETCH_GATEWAY_ISSUER: "https://gateway.example",
    }, { describeProviders: false, allowLoopback: true }));
  }

  const askAs = (app: ReturnType<typeof createGateway>, path: string, token: string) =>
    ask(app)(path, { headers: { authorization: `Bearer ${token}` } }).then(async (res) => {
      assertEnvelope(await res.json());
      return res.status;
    });

  it("two callers with different entitlements cause two requests; the same entitlements cause one", async () => {
    const open = await provider(slow("open"));
    const app = await tokenGateway([{ name: "open", endpoint: open.url }]);
    const narrow = await sign(caller, { sub: "alice", scope: "tracefetch:private" });
    const wide = await sign(caller, { sub: "alice", scope: "tracefetch:private tracefetch:team" });
    const alsoNarrow = await sign(caller, { sub: "bob", scope: "tracefetch:private" });
    assert.deepEqual(
      await Promise.all([
        askAs(app, "/v1/search?q=ent", narrow),
        askAs(app, "/v1/search?q=ent", wide),
      ]),
      [200, 200],
    );
    assert.equal(searches(open), 2);
    // A public-only plan does not depend on who asks beyond the scopes granted.
    await Promise.all([
      askAs(app, "/v1/search?q=same", narrow),
      askAs(app, "/v1/search?q=same", alsoNarrow),
    ]);
    assert.equal(searches(open), 3);
  });

  it("two callers with different sub for a gateway-token provider cause two requests; the same sub causes one", async () => {
    const secret = await provider(slow("private"));
    const app = await tokenGateway([{
      name: "private",
      endpoint: secret.url,
      sensitivity: "account-visible",
      auth: { type: "gateway-token" },
    }]);
    const alice = await sign(caller, { sub: "alice" });
    const bob = await sign(caller, { sub: "bob" });
    const aliceAgain = await sign(caller, { sub: "alice", jti: "second" });
    const path = "/v1/search?q=mine&providers=private";
    assert.deepEqual(
      await Promise.all([askAs(app, path, alice), askAs(app, path, bob)]),
      [200, 200],
    );
    assert.equal(searches(secret), 2);
    const subjects = secret.requests.map((r) => {
      const token = String(r.headers.authorization).split(".")[1] ?? "";
      return JSON.parse(atob(token.replace(/-/g, "+").replace(/_/g, "/"))).sub;
    });
    assert.deepEqual(subjects.sort(), ["alice", "bob"]);
    await Promise.all([askAs(app, path, alice), askAs(app, path, aliceAgain)]);
    assert.equal(searches(secret), 3);
  });
});
