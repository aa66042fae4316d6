/**
 * Describe negotiation (docs/protocol.md, "Describe"): the gateway asks each provider `describe`
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
    const app = gateway(entries(["v2only", "both"]), { describeProviders: true });
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
    const app = gateway(entries(names), { describeProviders: true });
    await warmUp(app, names.map((n) => servers[n]!));
    const { res, body } = await search(app, { scope: "all" });
    assert.equal(res.status, 200);
    assert.deepEqual(body.result.decision.providers, names);
    assert.deepEqual(body.result.decision.skipped, []);
    for (const attempt of body.result.candidates) assert.equal(attempt.outcome, "success");
  });

  it("asks describe again only after its TTL, by the injected clock", async () => {
    let now = Date.parse("2026-11-30T12:00:00Z");
    const app = gateway(entries(["plain"]), { describeProviders: true, now: () => now });
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
    const app = gateway(entries(["domains", "plain"]), { describeProviders: true });
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
