/**
 * The gateway's own suspension probe (docs/protocol.md, "Suspension"): a caller's query never
 * decides a suspension. Real providers on 127.0.0.1 and an injected clock, so time moves a second
 * per step without waiting for it.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { decodeJwt } from "jose";
import type { Handler } from "./support/servers.ts";
import { sleep, startServer } from "./support/servers.ts";
import { gateway, search } from "./support/gateway.ts";
import { AUDIENCE, ISSUER, keyPair, sign } from "./support/auth-keys.ts";
import {
  attemptOf,
  clock,
  PROBE_QUERY,
  provider,
  releaseHeld,
  shownAs,
  status,
  waitFor,
  withApp,
} from "./support/suspension-fixture.ts";

/** What the hostile caller asks: the provider fails every query that holds it. */
const BOOM = "boom";
const failsOnBoom = (query: string) =>
  query.includes(BOOM) ? { kind: "fail" as const, status: 500 } : null;

describe("the gateway's suspension probe", () => {
  it("a caller whose query a provider fails once a second cannot keep it from others: they are served in at least 9 of 10 searches", async () => {
    const p = await provider("alpha");
    p.modeOf = failsOnBoom;
    const c = clock();
    const app = withApp([{ name: "alpha", endpoint: p.server.url }], c);
    try {
      // Five in a row first: they set off the gateway's probe, which its own query answers.
      for (let i = 0; i < 5; i++) await search(app, { q: `${BOOM} ${i}` });
      const SECONDS = 30;
      let served = 0;
      for (let second = 0; second < SECONDS; second++) {
        await search(app, { q: `${BOOM} ${second}` });
        const other = await search(app, { q: `other question ${second}` });
        if (other.body.code === "ok") served++;
        c.t += 1_000;
      }
      assert.ok(served * 10 >= SECONDS * 9, `served ${served} of ${SECONDS}`);
      assert.equal((await status(app))[0]?.state, "ready");
      assert.ok(p.probes().length >= 1, "the gateway asked its own query");
      const hostile = p.server.requests.filter((r) => r.body.includes(BOOM)).length;
      assert.equal(hostile, 5 + SECONDS, "every hostile search still reached it, and failed");
    } finally {
      await p.server.close();
    }
  });

  it("a probe asks as the gateway: its provider token says sub tracefetch-gateway, never the caller's", async () => {
    const [signing, idp] = await Promise.all([keyPair("EdDSA", "gw-1"), keyPair("EdDSA", "idp-1")]);
    const p = await provider("minted");
    p.mode = { kind: "fail", status: 500 };
    const c = clock();
    const app = gateway([{
      name: "minted",
      endpoint: p.server.url,
      auth: { type: "gateway-token" },
    }], {
      env: {
        TRACEFETCH_SIGNING_JWK: JSON.stringify(signing.privateJwk),
        TRACEFETCH_GATEWAY_ISSUER: "http://gateway.test",
        TRACEFETCH_AUTH_JWKS: JSON.stringify({ keys: [idp.publicJwk] }),
        TRACEFETCH_AUTH_ISSUER: ISSUER,
        TRACEFETCH_AUTH_AUDIENCE: AUDIENCE,
      },
      ports: { now: c.now },
    });
    try {
      const headers = { authorization: `Bearer ${await sign(idp, { sub: "alice" })}` };
      for (let i = 0; i < 5; i++) await search(app, { q: `q ${i}` }, { headers });
      await shownAs(app, "minted", "suspended");
      const subs = p.probes().map((r) =>
        decodeJwt(String(r.authorization).replace(/^Bearer /, ""))
      );
      assert.equal(subs.length, 1);
      assert.deepEqual([subs[0]?.sub, subs[0]?.aud], ["tracefetch-gateway", "minted"]);
      const callers = p.server.requests.slice(0, 5)
        .map((r) => decodeJwt(String(r.headers.authorization).replace(/^Bearer /, "")).sub);
      assert.deepEqual(callers, Array(5).fill("alice"));
    } finally {
      await p.server.close();
    }
  });

  it("exactly one probe is in flight at a time, and it fails at its own deadline", async () => {
    const p = await provider("alpha");
    // Caller queries that hold "boom" fail; the probe's own query is held unanswered.
    p.modeOf = (query) => query === PROBE_QUERY ? { kind: "hold" } : failsOnBoom(query);
    const c = clock();
    const app = withApp([{ name: "alpha", endpoint: p.server.url, timeout_seconds: 1 }], c);
    try {
      for (let i = 0; i < 5; i++) await search(app, { q: `${BOOM} ${i}` });
      await waitFor("the probe to reach the provider", () => p.held.length === 1);
      for (let i = 5; i < 12; i++) await search(app, { q: `${BOOM} ${i}` });
      assert.equal(p.probes().length, 1, "failures while it is out start no other");
      // The provider never answers: the probe's deadline (its timeout, 1 s) is its failure.
      const shown = await shownAs(app, "alpha", "suspended");
      const failed = p.searches() - p.probes().length;
      assert.equal(shown.consecutive_failures, failed + 1, "every failure, then the probe's");
      c.t += 5_000;
      await search(app);
      await waitFor("the next probe to reach the provider", () => p.held.length === 2);
      for (let i = 0; i < 5; i++) await search(app, { q: `other ${i}` });
      assert.equal(p.probes().length, 2, "every search skips it while its probe is out");
      releaseHeld(p, "alpha");
      await shownAs(app, "alpha", "ready");
      assert.equal((await search(app, { q: "after" })).body.code, "ok");
    } finally {
      releaseHeld(p, "alpha");
      await p.server.close();
    }
  });

  it("a probe takes a place under the provider's max_concurrency like any request to it", async () => {
    const p = await provider("alpha");
    p.modeOf = (query) => query === PROBE_QUERY ? { kind: "hold" } : failsOnBoom(query);
    const c = clock();
    const app = withApp([{ name: "alpha", endpoint: p.server.url, max_concurrency: 1 }], c);
    try {
      for (let i = 0; i < 5; i++) await search(app, { q: `${BOOM} ${i}` });
      await waitFor("the probe to reach the provider", () => p.held.length === 1);
      const before = p.searches();
      const queued = await search(app, { q: "other", timeout_ms: "300", view: "full" });
      assert.equal(attemptOf(queued.body, "alpha").outcome, "timeout");
      assert.equal(p.searches(), before, "it waited behind the probe, never sent");
      releaseHeld(p, "alpha", 500);
      await shownAs(app, "alpha", "suspended");
    } finally {
      await p.server.close();
    }
  });

  it("a provider whose describe lists health is probed with health: ok or degraded is a success, unavailable suspends it", async () => {
    const probe = { status: "ok" };
    const server = await startServer(healthy("alpha", probe));
    const c = clock();
    const app = gateway([{ name: "alpha", endpoint: server.url }], {
      settings: { describeProviders: true },
      ports: { now: c.now },
    });
    const actions = () => server.requests.map((r) => JSON.parse(r.body).action as string);
    try {
      await search(app, { q: "warm up" });
      await waitFor("the describe answer", () => actions().includes("describe"));
      await sleep(50);
      for (let i = 0; i < 5; i++) await search(app, { q: `${BOOM} ${i}` });
      await waitFor(
        "the health probe to answer",
        async () =>
          actions().includes("health") &&
          (await status(app))[0]?.consecutive_failures === undefined,
      );
      probe.status = "unavailable";
      for (let i = 0; i < 5; i++) await search(app, { q: `${BOOM} again ${i}` });
      await shownAs(app, "alpha", "suspended");
      probe.status = "degraded";
      c.t += 5_000;
      await search(app, { q: "resume" });
      await shownAs(app, "alpha", "ready");
      assert.equal(actions().filter((a) => a === "health").length, 3);
      const searched = server.requests.map((r) => JSON.parse(r.body) as { query?: string });
      assert.ok(!searched.some((b) => b.query === PROBE_QUERY), "health decides, not a search");
    } finally {
      await server.close();
    }
  });
});

/** A provider that lists health in its describe, answers `probe.status`, and fails "boom". */
function healthy(name: string, probe: { status: string }): Handler {
  return (_req, res, body) => {
    const request = JSON.parse(body) as { action: string; query?: string };
    const reply = (status: number, document: Record<string, unknown>) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify({ provider: name, scope: name, ...document }));
    };
    switch (request.action) {
      case "describe":
        return reply(200, {
          schema_version: "tracefetch.provider-describe.v1",
          actions: ["search", "describe", "health"],
          filters: [],
          protocol_versions: [1],
        });
      case "health":
        return reply(200, {
          schema_version: "tracefetch.provider-health.v1",
          status: probe.status,
          coverage: "complete",
          watermark: null,
          diagnostics: [],
        });
      default:
        if (request.query?.includes(BOOM)) return reply(500, {});
        return reply(200, {
          schema_version: "tracefetch.provider-response.v1",
          candidates: [{ title: "T", locator: "https://example.com/a" }],
          warnings: [],
        });
    }
  };
}
