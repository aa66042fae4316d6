/**
 * How a search fans out, in workerd: suspension of a provider that keeps failing (confirmed and
 * ended by the gateway's own probe, run inside `waitUntil`), search filters, and coalescing of
 * identical searches in flight, through the bundled worker (tests/workerd/miniflare.ts) over real
 * providers on 127.0.0.1. The same contract as the Node tests suspension, suspension-probe, filters
 * and coalescing. One worker serves them all; each test has providers of its own scope, and the
 * background describe is off so a provider counts only searches.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Miniflare } from "miniflare";
import { assertEnvelope, manifestOf } from "../support/gateway.ts";
import {
  answer,
  type Handler,
  raw,
  sleep,
  startServer,
  type TestServer,
} from "../support/servers.ts";
import { startWorker } from "./miniflare.ts";

/** Long enough for every concurrent search of a test to arrive while the first is in flight. */
const SLOW_MS = 500;
/** Concurrent identical searches in the coalescing test. */
const CALLERS = 20;
/** Consecutive retryable failures that set off the gateway's probe (docs/protocol.md, "Suspension"). */
const FAILURES_TO_PROBE = 5;
/** What the gateway's probe asks a provider that declares no health. */
const PROBE_QUERY = "search";
/** What a hostile caller asks: the `picky` provider fails every query that holds it. */
const BOOM = "boom";
/** Whether the `comeback` provider fails every search. */
const comeback = { failing: true };

const hit = (locator: string, published_at?: string) => ({
  title: `t ${locator}`,
  locator,
  ...(published_at === undefined ? {} : { published_at }),
});
const EXCLUDED = ["https://evil.org/a", "https://WWW.Evil.org/b", "https://docs.evil.org:443/c"];
const KEPT = ["https://good.org/h", "https://notevil.org/g", "https://evil.org.good.org/i"];
const DATED = [
  hit("https://d.org/undated"),
  hit("https://d.org/unreadable", "June 2025"),
  hit("https://d.org/inside", "2025-06-01"),
  hit("https://d.org/last-day", "2025-12-31T23:30:00-05:00"),
  hit("https://d.org/too-late", "2026-01-01"),
];

const queryOf = (body: string): string => {
  try {
    return String((JSON.parse(body) as { query?: unknown }).query);
  } catch {
    return "";
  }
};

/** Fails with 500 when `fails(query)`, else answers one candidate. */
function failing(name: string, fails: (query: string) => boolean): Handler {
  const reply = answer(name, name, [{ title: `${name} page`, locator: `https://${name}.org/1` }]);
  return (req, res, body) =>
    fails(queryOf(body)) ? raw(500, "{}")(req, res, body) : reply(req, res, body);
}

/** Answers one candidate after `SLOW_MS`. */
function slow(name: string): Handler {
  const reply = answer(name, "slow", [{ title: `${name} page`, locator: `https://${name}.org/1` }]);
  return (req, res, body) => {
    setTimeout(() => void reply(req, res, body), SLOW_MS);
  };
}

// deno-lint-ignore no-explicit-any
type Body = any;
/** Every locator a caller sees: the merged list and each attempt's candidates. */
const locators = (body: Body): string[] => [
  ...body.result.merged.map((m: { locator: string }) => m.locator),
  ...body.result.candidates.flatMap((a: Body) =>
    (a.candidates ?? []).map((c: { locator: string }) => c.locator)
  ),
];

describe("the search fan-out in workerd", () => {
  const servers: Record<string, TestServer> = {};
  let mf: Miniflare;

  before(async () => {
    const handlers: Record<string, [string, Handler]> = {
      flaky: ["flaky", raw(500, "{}")],
      picky: ["picky", failing("picky", (query) => query.includes(BOOM))],
      comeback: ["comeback", failing("comeback", () => comeback.failing)],
      web: ["web", answer("web", "web", [...EXCLUDED, ...KEPT].map((l) => hit(l)))],
      dates: ["dated", answer("dates", "dated", DATED)],
      alpha: ["slow", slow("alpha")],
      beta: ["slow", slow("beta")],
    };
    for (const [name, [, handler]] of Object.entries(handlers)) {
      servers[name] = await startServer(handler);
    }
    mf = await startWorker({
      TRACEFETCH_ALLOW_LOOPBACK: "1",
      TRACEFETCH_DESCRIBE_PROVIDERS: "off",
      TRACEFETCH_MANIFEST: JSON.stringify(manifestOf(
        Object.entries(handlers).map(([name, [scope]]) => ({
          name,
          scope,
          endpoint: servers[name]!.url,
        })),
      )),
    });
  });
  after(async () => {
    await mf?.dispose();
    await Promise.all(Object.values(servers).map((s) => s.close()));
  });

  const get = async (query: string, headers: Record<string, string> = {}) => {
    const res = await mf.dispatchFetch(`http://gateway.test/v1/search?${query}`, { headers });
    return { status: res.status, body: assertEnvelope(await res.json()) };
  };
  const post = async (body: unknown) => {
    const res = await mf.dispatchFetch("http://gateway.test/v1/search", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: assertEnvelope(await res.json()) };
  };

  const statusOf = async (name: string) => {
    const res = await mf.dispatchFetch("http://gateway.test/v1/status");
    return assertEnvelope(await res.json()).result.providers
      .find((p: { name: string }) => p.name === name);
  };
  const eventually = async (what: string, ready: () => boolean | Promise<boolean>) => {
    for (let i = 0; i < 200; i++) {
      if (await ready()) return;
      await sleep(10);
    }
    assert.fail(`timed out waiting for ${what}`);
  };
  const probesOf = (server: TestServer) =>
    server.requests.filter((r) => queryOf(r.body) === PROBE_QUERY).length;

  it("5 failures in a row and a failed probe of the gateway's own suspend a provider: not contacted, skipped as suspended", async () => {
    const flaky = servers.flaky!;
    for (let i = 1; i <= FAILURES_TO_PROBE; i++) {
      const { body } = await get("q=x&providers=flaky&view=full");
      const [attempt] = body.result.candidates;
      assert.equal(attempt.outcome, "search_failed");
      if (i < FAILURES_TO_PROBE) assert.doesNotMatch(attempt.message, /suspended|probe/);
      else {
        assert.match(
          attempt.message,
          /; 5 consecutive failures: the gateway probes it before suspending it$/,
        );
      }
    }
    await eventually(
      "the probe to fail",
      async () => (await statusOf("flaky")).state === "suspended",
    );
    assert.equal(flaky.requests.length, FAILURES_TO_PROBE + 1);
    assert.equal(probesOf(flaky), 1, "the sixth request is the gateway's probe");

    const { status, body } = await get("q=x&providers=flaky&view=full");
    assert.equal(flaky.requests.length, FAILURES_TO_PROBE + 1, "not contacted while suspended");
    assert.equal(status, 503);
    assert.equal(body.code, "all_providers_failed");
    assert.ok(body.retry_after_ms > 0 && body.retry_after_ms <= 5_000);
    const skipped = body.result.decision.skipped;
    assert.equal(skipped.length, 1);
    assert.deepEqual([skipped[0].provider, skipped[0].reason], ["flaky", "suspended"]);
    assert.ok(Date.parse(skipped[0].until) > Date.now(), "until lies ahead");

    const shown = await statusOf("flaky");
    assert.deepEqual([shown.state, shown.until, shown.consecutive_failures], [
      "suspended",
      skipped[0].until,
      FAILURES_TO_PROBE + 1,
    ]);
  });

  it("a caller whose query a provider fails cannot keep it from others: they are served in at least 9 of 10 searches", async () => {
    const picky = servers.picky!;
    for (let i = 0; i < FAILURES_TO_PROBE; i++) await get(`q=${BOOM}+${i}&providers=picky`);
    const ROUNDS = 10;
    let served = 0;
    for (let i = 0; i < ROUNDS; i++) {
      await get(`q=${BOOM}+again+${i}&providers=picky`);
      const other = await get(`q=other+${i}&providers=picky`);
      if (other.body.code === "ok") served++;
    }
    assert.ok(served * 10 >= ROUNDS * 9, `served ${served} of ${ROUNDS}`);
    await eventually("the gateway's probe", () => probesOf(picky) >= 1);
    assert.equal((await statusOf("picky")).state, "ready");
  });

  it("a suspended provider comes back once the probe that the first search after its end starts succeeds", async () => {
    const server = servers.comeback!;
    for (let i = 0; i < FAILURES_TO_PROBE; i++) await get(`q=x+${i}&providers=comeback`);
    await eventually(
      "the probe to fail",
      async () => (await statusOf("comeback")).state === "suspended",
    );
    comeback.failing = false;
    await sleep(Date.parse((await statusOf("comeback")).until) - Date.now() + 50);
    const first = await get("q=after&providers=comeback");
    assert.equal(first.body.result.decision.skipped[0]?.reason, "suspended", "it starts the probe");
    await eventually(
      "the probe to succeed",
      async () => (await statusOf("comeback")).state === "ready",
    );
    assert.equal(probesOf(server), 2, "one to confirm, one to end the suspension");
    const back = await get("q=back&providers=comeback");
    assert.equal(back.body.code, "ok");
  });

  it("an excluded host never comes back, in the body form or the GET form", async () => {
    for (
      const { status, body } of [
        await post({
          query: "x",
          scope: "web",
          filters: { domains: { exclude: ["evil.org"] } },
        }),
        await get("q=x&scope=web&view=full&exclude_domains=www.evil.org"),
      ]
    ) {
      assert.equal(status, 200);
      assert.equal(body.code, "ok");
      const seen = locators(body);
      for (const l of EXCLUDED) assert.ok(!seen.includes(l), `${l} came back`);
      assert.deepEqual(
        body.result.merged.map((m: { locator: string }) => m.locator).sort(),
        [...KEPT].sort(),
      );
      assert.equal(body.result.candidates[0].filtered_out, EXCLUDED.length);
    }
  });

  it("a date filter drops undated and unreadable candidates and keeps both boundary days", async () => {
    const { status, body } = await post({
      query: "x",
      scope: "dated",
      filters: { published_after: "2025-01-01", published_before: "2025-12-31" },
    });
    assert.equal(status, 200);
    const [attempt] = body.result.candidates;
    assert.deepEqual(attempt.candidates.map((c: { locator: string }) => c.locator), [
      "https://d.org/inside",
      "https://d.org/last-day",
    ]);
    assert.equal(attempt.filtered_out, DATED.length - 2);
    assert.deepEqual(locators(body).filter((l) => /undated|unreadable/.test(l)), []);
  });

  it("identical concurrent searches share one fan-out: one request per provider, every caller answered", async () => {
    const [alpha, beta] = [servers.alpha!, servers.beta!];
    const answers = await Promise.all(
      Array.from(
        { length: CALLERS },
        (_, i) => get("q=shared+question&scope=slow", { "x-request-id": `caller-${i}` }),
      ),
    );
    assert.deepEqual(answers.map((a) => a.status), Array(CALLERS).fill(200));
    assert.deepEqual(
      answers.map((a) => a.body.request_id),
      Array.from({ length: CALLERS }, (_, i) => `caller-${i}`),
    );
    for (const a of answers) assert.equal(a.body.result.merged.length, 2);
    assert.deepEqual([alpha.requests.length, beta.requests.length], [1, 1]);
    const coalesced = answers.map((a) => a.body.result.decision.coalesced);
    assert.deepEqual(
      [coalesced.filter((c) => c === false).length, coalesced.filter((c) => c === true).length],
      [1, CALLERS - 1],
    );
  });

  it("two different concurrent searches each have their own fan-out", async () => {
    const [alpha, beta] = [servers.alpha!, servers.beta!];
    const from = [alpha.requests.length, beta.requests.length];
    const answers = await Promise.all([
      get("q=first+question&scope=slow"),
      get("q=second+question&scope=slow"),
    ]);
    assert.deepEqual(answers.map((a) => a.status), [200, 200]);
    for (const a of answers) assert.equal(a.body.result.decision.coalesced, false);
    assert.deepEqual([alpha.requests.length - from[0]!, beta.requests.length - from[1]!], [2, 2]);
  });
});
