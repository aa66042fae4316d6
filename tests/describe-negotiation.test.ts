/**
 * Describe negotiation (docs/protocol.md, "describe"): the gateway asks each provider `describe`
 * in the background, skips one that speaks no protocol major it speaks, keeps every provider that
 * answers anything else as a search-only v1 provider, and sends a provider only the filters it
 * declared. Real providers on 127.0.0.1.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { answer, type Handler, sleep, startServer, type TestServer } from "./support/servers.ts";
import { gateway, post, search } from "./support/gateway.ts";

type Body = { action?: string; filters?: unknown };
const parse = (body: string): Body => {
  try {
    return JSON.parse(body) as Body;
  } catch {
    return {};
  }
};

/** A provider whose describe answer the test picks; its searches answer one candidate. */
function provider(name: string, onDescribe: Handler): Handler {
  const ok = answer(name, "all", [{
    title: "T",
    locator: `https://good.org/${name}`,
    snippet: "s",
  }]);
  return (req, res, body) =>
    parse(body).action === "describe" ? onDescribe(req, res, body) : ok(req, res, body);
}

function describes(name: string, extra: Record<string, unknown>): Handler {
  return (_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({
      schema_version: "tracefetch.provider-describe.v1",
      provider: name,
      scope: "all",
      actions: ["search", "describe"],
      filters: [],
      protocol_versions: [1],
      ...extra,
    }));
  };
}

function status(code: number, text = "{}"): Handler {
  return (_req, res) => {
    res.writeHead(code, { "content-type": "application/json" });
    res.end(text);
  };
}

const searches = (server: TestServer) =>
  server.requests.map((r) => parse(r.body)).filter((b) => b.action === "search");
const describesOf = (server: TestServer) =>
  server.requests.filter((r) => parse(r.body).action === "describe").length;

/** Searches until every provider was described once and the describes have answered. */
async function warmUp(app: ReturnType<typeof gateway>, servers: TestServer[]) {
  await search(app, { scope: "all" });
  for (let i = 0; i < 200 && servers.some((s) => describesOf(s) === 0); i++) await sleep(10);
  // The answers are read after the request arrives; give the cache a moment to take them.
  await sleep(50);
}

describe("describe negotiation", () => {
  const servers: Record<string, TestServer> = {};
  before(async () => {
    const handlers: Record<string, Handler> = {
      v2only: provider("v2only", describes("v2only", { protocol_versions: [2] })),
      both: provider("both", describes("both", { protocol_versions: [1, 2] })),
      s400: provider("s400", status(400)),
      s404: provider("s404", status(404)),
      s501: provider("s501", status(501)),
      garbage: provider("garbage", status(200, "<html>not json")),
      domains: provider("domains", describes("domains", { filters: ["domains"] })),
      plain: provider("plain", describes("plain", { filters: [] })),
    };
    for (const [name, handler] of Object.entries(handlers)) {
      servers[name] = await startServer(handler);
    }
  });
  after(async () => {
    await Promise.all(Object.values(servers).map((s) => s.close()));
  });

  const entries = (names: string[]) =>
    names.map((name) => ({
      name,
      scope: "all",
      endpoint: servers[name]!.url,
      timeout_seconds: 5,
    }));

  it("skips a provider that speaks protocol major 2 only, naming both sides' versions", async () => {
    const app = gateway(entries(["v2only", "both"]), { settings: { describeProviders: true } });
    await warmUp(app, [servers.v2only!, servers.both!]);
    const before = searches(servers.v2only!).length;
    const { res, body } = await search(app, { scope: "all" });
    assert.equal(res.status, 200);
    assert.deepEqual(body.result.decision.providers, ["both"]);
    const skip = body.result.decision.skipped.find((s: { provider: string }) =>
      s.provider === "v2only"
    );
    assert.equal(skip?.reason, "protocol_version_unsupported");
    assert.match(skip.message, /speaks protocol major 2; this gateway speaks major 1/);
    assert.equal(searches(servers.v2only!).length, before, "a skipped provider is not searched");
  });

  it("keeps a provider answering 400, 404, 501 or garbage to describe as a search-only provider", async () => {
    const names = ["s400", "s404", "s501", "garbage"];
    const app = gateway(entries(names), { settings: { describeProviders: true } });
    await warmUp(app, names.map((n) => servers[n]!));
    const { res, body } = await search(app, { scope: "all" });
    assert.equal(res.status, 200);
    assert.deepEqual(body.result.decision.providers, names);
    assert.deepEqual(body.result.decision.skipped, []);
    for (const attempt of body.result.candidates) assert.equal(attempt.outcome, "success");
  });

  it("asks describe again only after its TTL, by the injected clock", async () => {
    let now = Date.parse("2026-11-30T12:00:00Z");
    const app = gateway(entries(["plain"]), {
      settings: { describeProviders: true },
      ports: { now: () => now },
    });
    const start = describesOf(servers.plain!);
    await warmUp(app, []);
    for (let i = 0; i < 200 && describesOf(servers.plain!) === start; i++) await sleep(10);
    await sleep(50);
    await search(app, { scope: "all" });
    await sleep(50);
    assert.equal(describesOf(servers.plain!), start + 1, "a fresh answer is not asked again");
    now += 10 * 60_000 + 1;
    await search(app, { scope: "all" });
    for (let i = 0; i < 200 && describesOf(servers.plain!) === start + 1; i++) await sleep(10);
    assert.equal(describesOf(servers.plain!), start + 2, "a stale answer is asked again");
  });

  it("sends the domains filter to a provider that declared it and never to one that did not", async () => {
    const app = gateway(entries(["domains", "plain"]), { settings: { describeProviders: true } });
    await warmUp(app, [servers.domains!, servers.plain!]);
    const { res } = await post(
      app,
      JSON.stringify({
        query: "x",
        scope: "all",
        filters: { domains: { include: ["good.org"] } },
      }),
    );
    assert.equal(res.status, 200);
    const toDomains = searches(servers.domains!).at(-1);
    const toPlain = searches(servers.plain!).at(-1);
    assert.deepEqual(toDomains?.filters, { domains: { include: ["good.org"] } });
    assert.equal(toPlain !== undefined && "filters" in toPlain, false);
  });
});

describe("a search-only provider's other actions are not supported, whatever it refuses them with", () => {
  /** A strict v1 provider: search answers; every other action is refused by `refusal`. */
  const strict = (name: string, refusal: Handler): Handler => {
    const ok = provider(name, refusal);
    return (req, res, body) =>
      parse(body).action === "search" ? ok(req, res, body) : refusal(req, res, body);
  };
  const invalid = status(
    400,
    JSON.stringify({
      schema_version: "tracefetch.provider-error.v1",
      code: "invalid_request",
      message: "action: Invalid type",
    }),
  );
  const servers: Record<string, TestServer> = {};
  before(async () => {
    servers.s400 = await startServer(strict("s400", invalid));
    servers.s405 = await startServer(strict("s405", status(405, "")));
    // Declares health, then refuses it: that is a failure of the provider.
    servers.lists = await startServer((req, res, body) =>
      parse(body).action === "describe"
        ? describes("lists", { actions: ["search", "describe", "health"] })(req, res, body)
        : parse(body).action === "health"
        ? invalid(req, res, body)
        : provider("lists", invalid)(req, res, body)
    );
  });
  after(async () => {
    await Promise.all(Object.values(servers).map((s) => s.close()));
  });
  const entry = (name: string) => ({
    name,
    scope: "all",
    endpoint: servers[name]!.url,
    timeout_seconds: 5,
  });
  const doctor = async (app: ReturnType<typeof gateway>) => {
    const res = await app.request("/v1/doctor");
    const body = await res.json();
    return Object.fromEntries(
      body.result.providers.map((p: { name: string; health: unknown }) => [p.name, p.health]),
    );
  };
  const expand = async (app: ReturnType<typeof gateway>, provider: string) => {
    const res = await app.request("/v1/expand", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ provider, locator: `https://good.org/${provider}` }),
    });
    return { status: res.status, body: await res.json() };
  };

  it("once describe was refused, a health probe refused with 400 or 405 is unknown, never unavailable", async () => {
    const app = gateway([entry("s400"), entry("s405")], { settings: { describeProviders: true } });
    await warmUp(app, [servers.s400!, servers.s405!]);
    const health = await doctor(app);
    assert.equal(health.s400.status, "unknown");
    assert.equal(health.s405.status, "unknown");
  });

  it("once describe was refused, an expand refused with 400 invalid_request is action_unsupported", async () => {
    const app = gateway([entry("s400")], { settings: { describeProviders: true } });
    await warmUp(app, [servers.s400!]);
    const { status: code, body } = await expand(app, "s400");
    assert.equal(code, 400);
    assert.equal(body.code, "action_unsupported");
  });

  it("before describe answered, a 400 to an action stays the provider's failure: nothing says it is search-only", async () => {
    const app = gateway([entry("s400")]);
    const { body } = await expand(app, "s400");
    assert.equal(body.code, "provider_failed");
  });

  it("a provider whose describe lists health and refuses it with 400 is unavailable", async () => {
    const app = gateway([entry("lists")], { settings: { describeProviders: true } });
    await warmUp(app, [servers.lists!]);
    const health = await doctor(app);
    assert.equal(health.lists.status, "unavailable");
  });
});
