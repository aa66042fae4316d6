/**
 * What two gateway instances over one shared store must show (docs/deploy.md, "Shared state"),
 * as scenarios any pair of instances can be put through: two apps in this process, two Node or
 * Deno processes over Redis, two workers over one Durable Object namespace. Each scenario uses its
 * own provider, named in the pair's manifest, so they can run one after another on one pair.
 */
import assert from "node:assert/strict";
import type { IncomingMessage, ServerResponse } from "node:http";
import { DEFAULT_CONFORMANCE_QUERY } from "../../src/protocol/limits.ts";
import { answer, startServer, type TestServer } from "./servers.ts";

/** How a test reaches one instance: a path (with query) and init, to the instance's Response. */
export type Instance = (path: string, init?: RequestInit) => Promise<Response>;
export type Pair = { a: Instance; b: Instance };

/** The providers the scenarios use, by name: their servers must be listed in the pair's manifest. */
export type ScenarioProviders = {
  /** Fails every search with a 503 (a retryable failure it caused). */
  failing: TestServer;
  /** Asks for a one-second wait until `heal()`, then answers. */
  waiting: TestServer & { heal: () => void };
  /** Answers after SLOW_MS, so identical searches overlap. */
  slow: TestServer;
};

/** How long the slow provider takes: every search of a burst arrives before it answers. */
export const SLOW_MS = 300;

/** Requests a provider received that were searches (describe and health are not counted). */
export const searchesAt = (server: TestServer) =>
  server.requests.filter((r) => r.body.includes('"query"')).length;

/** The three providers, started on 127.0.0.1, and their manifest entries. */
export async function scenarioProviders(): Promise<
  { providers: ScenarioProviders; entries: Array<{ name: string; endpoint: string }> }
> {
  const failing = await startServer((_req, res) => {
    res.writeHead(503, { "content-type": "application/json" });
    res.end("{}");
  });
  let healed = false;
  const ok = answer("waiting", "waiting", [{ title: "Back", locator: "https://w.example/1" }]);
  const waiting = await startServer((req, res, body) => {
    if (healed) return ok(req, res, body);
    res.writeHead(429, { "content-type": "application/json", "retry-after": "1" });
    res.end("{}");
  });
  const slowAnswer = answer("slow", "slow", [{ title: "Slow", locator: "https://s.example/1" }]);
  const slow = await startServer((req: IncomingMessage, res: ServerResponse, body: string) => {
    setTimeout(() => void slowAnswer(req, res, body), SLOW_MS);
  });
  return {
    providers: { failing, waiting: Object.assign(waiting, { heal: () => (healed = true) }), slow },
    entries: [
      { name: "failing", endpoint: failing.url },
      { name: "waiting", endpoint: waiting.url },
      { name: "slow", endpoint: slow.url },
    ],
  };
}

async function envelope(instance: Instance, path: string) {
  const res = await instance(path);
  return { status: res.status, body: await res.json() };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Searches alternating between the instances against a provider that fails every time: five
 * failures, then the gateway's confirming probe, then a suspension both instances honour.
 * The contacts, probe included.
 */
export async function alternatingFailures(pair: Pair, failing: TestServer): Promise<number> {
  const before = searchesAt(failing);
  let confirmations = 0;
  for (let i = 0; i < 10; i++) {
    const instance = i % 2 === 0 ? pair.a : pair.b;
    const { status, body } = await envelope(
      instance,
      `/v1/search?q=alternating&providers=failing`,
    );
    assert.ok(status === 200 || status === 502 || status === 503, `search ${i}: ${status}`);
    const attempts = (body.result?.candidates ?? []) as Array<{ message?: string }>;
    if (attempts.some((a) => /probes it before suspending it/.test(a.message ?? ""))) {
      confirmations++;
      // The confirming probe runs beside the searches: a caller's search sent before its verdict
      // still reaches the provider (docs/protocol.md, "Suspension"). Callers a moment apart see the
      // verdict, so this one waits for it as long as a loaded machine may need.
      await untilSuspended(instance, "failing");
    } else await pause(50);
  }
  assert.equal(confirmations, 1, "one search's failure claimed the confirming probe");
  return searchesAt(failing) - before;
}

/** Waits until `/v1/status` shows the provider suspended, at most PROBE_WAIT_MS. */
async function untilSuspended(instance: Instance, provider: string): Promise<void> {
  const deadline = Date.now() + PROBE_WAIT_MS;
  while (Date.now() < deadline) {
    const { body } = await envelope(instance, "/v1/status");
    const states = body.result.providers as Array<{ name: string; state: string }>;
    if (states.find((p) => p.name === provider)?.state === "suspended") return;
    await pause(20);
  }
  assert.fail(`the confirming probe of ${provider} had no verdict within ${PROBE_WAIT_MS} ms`);
}

/**
 * A provider suspended for the wait it asked for: once the wait is over, 50 concurrent searches
 * (all different, so none coalesce) across both instances. The probes it received then.
 */
export async function probesAfterSuspension(
  pair: Pair,
  waiting: ScenarioProviders["waiting"],
): Promise<number> {
  await envelope(pair.a, `/v1/search?q=first&providers=waiting`);
  const asked = waiting.requests.length;
  waiting.heal();
  await pause(1_200);
  const started = waiting.requests.length;
  await Promise.all(
    Array.from(
      { length: 50 },
      (_, i) => envelope(i % 2 === 0 ? pair.a : pair.b, `/v1/search?q=burst${i}&providers=waiting`),
    ),
  );
  assert.equal(asked, started, "nothing reached the provider during its wait");
  // The gateway's probe is its health, or a search for the conformance query; a caller's is not.
  const probe = (body: string) => {
    const request = JSON.parse(body) as { query?: unknown; action?: unknown };
    return request.query === DEFAULT_CONFORMANCE_QUERY || request.action === "health";
  };
  const probes = () => waiting.requests.slice(started).filter((r) => probe(r.body)).length;
  // The probe runs beside the searches, so it may land after the last answer: wait for the first
  // (a loaded machine delays it), then a moment more in which a second one would show.
  const deadline = Date.now() + PROBE_WAIT_MS;
  while (probes() === 0 && Date.now() < deadline) await pause(50);
  await pause(300);
  return probes();
}

/** How long a probe may take to arrive after the burst: seconds on a loaded 2-core machine. */
const PROBE_WAIT_MS = 5_000;

/** 50 identical concurrent searches, 25 on each instance: the searches the provider received. */
export async function identicalBurst(pair: Pair, slow: TestServer): Promise<number> {
  const before = searchesAt(slow);
  const answers = await Promise.all(
    Array.from(
      { length: 50 },
      (_, i) => envelope(i % 2 === 0 ? pair.a : pair.b, `/v1/search?q=identical&providers=slow`),
    ),
  );
  for (const { status, body } of answers) {
    assert.equal(status, 200);
    assert.equal(body.code, "ok");
    assert.equal(body.result.merged[0]?.title, "Slow");
  }
  const coalesced = answers.filter(({ body }) => body.result.decision.coalesced === true).length;
  assert.equal(coalesced, 49, "every search but the one that ran says it was coalesced");
  return searchesAt(slow) - before;
}

/** The instance's shared_state block, as `/v1/status` shows it. */
export async function sharedStateOf(instance: Instance) {
  const { body } = await envelope(instance, "/v1/status");
  return body.result.shared_state as {
    backend: string;
    state: string;
    reason?: string;
    fallbacks: number;
  };
}

/** Asserts that neither instance fell back to its own memory: `backend` served every operation. */
export async function assertNoFallbacks(pair: Pair, backend: string): Promise<void> {
  for (const instance of [pair.a, pair.b]) {
    assert.deepEqual(await sharedStateOf(instance), { backend, state: "ok", fallbacks: 0 });
  }
}

/** The caller limit the two-instance runs set: `caller_limits.searches_per_minute`. */
export const SEARCHES_PER_MINUTE = 20;

/**
 * 60 distinct concurrent searches from one client, alternating between the instances, whose
 * manifest sets `caller_limits.searches_per_minute` to SEARCHES_PER_MINUTE: how many passed and
 * how many were refused, each refusal checked (429 `rate_limited`, action `retry`, a retry time
 * within the minute in the envelope and in Retry-After, a message naming the caller's own limit).
 * Status, the page and the JWKS, asked afterwards, are not refused.
 */
export async function callerLimitBurst(
  pair: Pair,
  provider: string,
): Promise<{ passed: number; refused: number }> {
  const answers = await Promise.all(
    Array.from({ length: 60 }, async (_, i) => {
      const res = await (i % 2 === 0 ? pair.a : pair.b)(
        `/v1/search?q=limited${i}&providers=${provider}`,
      );
      return {
        status: res.status,
        retryAfter: res.headers.get("retry-after"),
        body: await res.json(),
      };
    }),
  );
  let passed = 0;
  let refused = 0;
  for (const { status, retryAfter, body } of answers) {
    if (status === 200) {
      passed++;
      continue;
    }
    refused++;
    assert.equal(status, 429);
    assert.equal(body.code, "rate_limited");
    assert.equal(body.action, "retry");
    const wait = body.retry_after_ms;
    assert.ok(Number.isInteger(wait) && wait > 0 && wait <= 60_000, `retry_after_ms ${wait}`);
    assert.equal(retryAfter, String(Math.ceil(wait / 1000)));
    assert.match(body.error.message, /your own limit of 20 searches a minute/);
  }
  for (const path of ["/v1/status", "/", "/.well-known/jwks.json"]) {
    for (const instance of [pair.a, pair.b]) {
      const res = await instance(path);
      await res.body?.cancel();
      assert.notEqual(res.status, 429, `${path} is never limited`);
    }
  }
  return { passed, refused };
}
