/**
 * `GET /v1/doctor` (docs/envelope.md, "Other routes"): each provider's health, probed at most once
 * per TTL with one probe in flight per provider; `/v1/status` shows the cached health only.
 * Real providers on 127.0.0.1 that count the health requests they receive.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { assertEnvelope, gateway } from "./support/gateway.ts";
import { type Handler, startServer, type TestServer } from "./support/servers.ts";

const action = (body: string) => {
  try {
    return (JSON.parse(body) as { action?: string }).action;
  } catch {
    return undefined;
  }
};
const healthRequests = (s: TestServer) => s.requests.filter((r) => action(r.body) === "health");

/** Answers health after a delay, so concurrent callers overlap one probe. */
function healthy(name: string): Handler {
  return (_req, res) => {
    setTimeout(() => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({
        schema_version: "tracefetch.provider-health.v1",
        provider: name,
        scope: name,
        status: "ok",
        coverage: "complete",
        watermark: "2026-11-30T12:00:00Z",
        document_count: 3,
        diagnostics: [],
      }));
    }, 50);
  };
}

function status(code: number): Handler {
  return (_req, res) => {
    res.writeHead(code, { "content-type": "application/json" });
    res.end("{}");
  };
}

describe("GET /v1/doctor", () => {
  const servers: Record<string, TestServer> = {};
  let now = Date.parse("2026-11-30T12:00:00Z");
  let app: ReturnType<typeof gateway>;
  before(async () => {
    servers.a = await startServer(healthy("a"));
    servers.b = await startServer(healthy("b"));
    servers.bare = await startServer(status(501));
    servers.broken = await startServer(status(500));
    app = gateway(
      Object.entries(servers).map(([name, s]) => ({ name, endpoint: s.url })),
      { ports: { now: () => now } },
    );
  });
  after(async () => {
    await Promise.all(Object.values(servers).map((s) => s.close()));
  });

  const doctor = async () => {
    const res = await app.request("/v1/doctor");
    return { res, body: assertEnvelope(await res.json()) };
  };

  it("answers 100 concurrent callers with exactly one health request per provider", async () => {
    const answers = await Promise.all(Array.from({ length: 100 }, doctor));
    for (const { res, body } of answers) {
      assert.equal(res.status, 200);
      assert.equal(body.command, "doctor");
    }
    for (const [name, server] of Object.entries(servers)) {
      assert.equal(healthRequests(server).length, 1, name);
    }
    const byName = Object.fromEntries(
      answers[0]!.body.result.providers.map((p: { name: string }) => [p.name, p]),
    );
    assert.equal(byName.a.health.status, "ok");
    assert.equal(byName.a.health.document_count, 3);
    assert.equal(byName.bare.health.status, "unknown", "no health support is unknown");
    assert.equal(byName.broken.health.status, "unavailable", "a failed probe is never healthy");
    assert.equal(byName.broken.health.coverage, "unknown");
  });

  it("probes again only after the TTL, by the injected clock", async () => {
    await doctor();
    assert.equal(healthRequests(servers.a!).length, 1);
    now += 30_001;
    await doctor();
    assert.equal(healthRequests(servers.a!).length, 2);
  });

  it("/v1/status shows the cached health and never probes", async () => {
    now += 60_000;
    const before = healthRequests(servers.a!).length;
    const res = await app.request("/v1/status");
    const body = assertEnvelope(await res.json());
    assert.equal(healthRequests(servers.a!).length, before);
    const a = body.result.providers.find((p: { name: string }) => p.name === "a");
    assert.equal(a.health.status, "ok");
    assert.equal(a.state, "ready");
  });

  it("checked_at is the wall-clock time of the probe, RFC 3339, whatever the monotonic clock reads", async () => {
    const own = await startServer(healthy("a"));
    const wall = Date.parse("2026-12-01T08:30:00.000Z");
    const fresh = gateway([{ name: "a", endpoint: own.url }], {
      ports: { now: () => 2_804, wallClock: () => wall },
    });
    const body = assertEnvelope(await (await fresh.request("/v1/doctor")).json());
    assert.equal(body.result.providers[0].health.checked_at, "2026-12-01T08:30:00.000Z");
    const real = gateway([{ name: "a", endpoint: own.url }]);
    const checked = assertEnvelope(await (await real.request("/v1/doctor")).json()).result
      .providers[0].health.checked_at;
    assert.match(checked, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.ok(Math.abs(Date.parse(checked) - Date.now()) < 60_000, checked);
    await own.close();
  });
  it("a probe that times out says so, not that a caller went away", async () => {
    // Never answers: the probe's own deadline (HEALTH_TIMEOUT_MS, 5 s) ends it.
    const silent = await startServer(() => {});
    try {
      const fresh = gateway([{ name: "silent", endpoint: silent.url }]);
      const body = assertEnvelope(await (await fresh.request("/v1/doctor")).json());
      const { health } = body.result.providers[0];
      assert.equal(health.status, "unavailable");
      assert.deepEqual(health.diagnostics, ["the health probe got no answer within 5000 ms"]);
    } finally {
      await silent.close();
    }
  });
});
