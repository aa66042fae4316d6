/**
 * Provider suspension (docs/protocol.md, "Suspension"): real providers on 127.0.0.1 that fail on
 * demand, and an injected clock, so a suspension ends without waiting for it.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { ServerResponse } from "node:http";
import { answer, type Handler, sleep, startServer, type TestServer } from "./support/servers.ts";
import { assertEnvelope, gateway, type ProviderEntry, search } from "./support/gateway.ts";
import type { CliContext } from "../src/cli/cli-context.ts";
import { doctorCommand } from "../src/cli/doctor-command.ts";
import { NO_PAINT } from "../src/cli/paint.ts";
import { statusCommand } from "../src/cli/status-command.ts";
import { readSettings } from "../src/gateway/settings.ts";

type Mode =
  | { kind: "ok" }
  | { kind: "fail"; status: number; headers?: Record<string, string> }
  | { kind: "hold" };

/** A provider whose answers the test switches, and the responses it holds back. */
type Controlled = {
  server: TestServer;
  mode: Mode;
  held: ServerResponse[];
  /** Search requests received (other actions are not counted). */
  searches: () => number;
};

const isSearch = (body: string) => {
  try {
    return (JSON.parse(body) as { action?: unknown }).action === "search";
  } catch {
    return false;
  }
};

async function provider(name: string): Promise<Controlled> {
  const ok = answer(name, name, [{ title: "T", locator: "https://example.com/a", snippet: "s" }]);
  const ctl: Controlled = {
    server: undefined as unknown as TestServer,
    mode: { kind: "ok" },
    held: [],
    searches: () => ctl.server.requests.filter((r) => isSearch(r.body)).length,
  };
  const handler: Handler = (req, res, body) => {
    // Only searches: any other action is refused as a search-only provider refuses it.
    if (!isSearch(body)) {
      res.writeHead(501, { "content-type": "application/json" });
      res.end("{}");
      return;
    }
    const mode = ctl.mode;
    switch (mode.kind) {
      case "ok":
        return ok(req, res, body);
      case "fail":
        res.writeHead(mode.status, { "content-type": "application/json", ...mode.headers });
        res.end("{}");
        return;
      case "hold":
        ctl.held.push(res);
        return;
    }
  };
  ctl.server = await startServer(handler);
  return ctl;
}

/** Answers every held request with a success. */
function releaseHeld(ctl: Controlled, name: string) {
  const ok = answer(name, name, [{ title: "T", locator: "https://example.com/a", snippet: "s" }]);
  for (const res of ctl.held.splice(0)) ok(undefined as never, res, "");
}

async function waitFor(what: string, ready: () => boolean) {
  for (let i = 0; i < 400 && !ready(); i++) await sleep(5);
  assert.ok(ready(), `timed out waiting for ${what}`);
}

/** A clock the test moves by hand. */
function clock() {
  const c = { t: 1_000_000, now: () => c.t };
  return c;
}

function attemptOf(body: { result: { candidates: Array<{ provider: string }> } }, name: string) {
  const found = body.result.candidates.find((r) => r.provider === name);
  assert.ok(found, `no attempt of ${name}`);
  return found as unknown as {
    outcome: string;
    code: string;
    message: string;
    budget?: string;
  };
}

async function status(app: ReturnType<typeof gateway>) {
  const res = await app.request("/v1/status");
  const body = assertEnvelope(await res.json());
  return body.result.providers as Array<
    { name: string; state: string; until?: string; consecutive_failures?: number }
  >;
}

function withApp(entries: ProviderEntry[], c: ReturnType<typeof clock>) {
  return gateway(entries, { ports: { now: c.now } });
}

describe("suspension", () => {
  it("a provider that fails 5 times in a row is not contacted during its suspension and comes back after it", async () => {
    const p = await provider("alpha");
    const c = clock();
    const app = withApp([{ name: "alpha", endpoint: p.server.url }], c);
    try {
      p.mode = { kind: "fail", status: 500 };
      for (let i = 1; i <= 4; i++) {
        const { body } = await search(app, { view: "full" });
        assert.doesNotMatch(attemptOf(body, "alpha").message, /suspended/);
      }
      const fifth = await search(app, { view: "full" });
      assert.match(
        attemptOf(fifth.body, "alpha").message,
        /; suspended for 5 s after 5 consecutive failures$/,
      );
      assert.equal(p.searches(), 5);

      const [shown] = await status(app);
      assert.equal(shown?.state, "suspended");
      assert.equal(shown?.consecutive_failures, 5);
      assert.ok(Date.parse(shown?.until ?? "") > Date.now(), "until lies ahead");

      c.t += 4_999;
      const during = await search(app, { view: "full" });
      assert.equal(p.searches(), 5, "not contacted while suspended");
      assert.equal(during.body.code, "all_providers_failed");
      assert.equal(during.body.retry_after_ms, 1);
      const skipped = during.body.result.decision.skipped;
      assert.equal(skipped.length, 1);
      assert.equal(skipped[0].provider, "alpha");
      assert.equal(skipped[0].reason, "suspended");
      assert.equal(skipped[0].until, shown?.until);

      p.mode = { kind: "ok" };
      c.t += 1;
      const after = await search(app);
      assert.equal(after.body.code, "ok");
      assert.equal(p.searches(), 6);
      const again = await search(app);
      assert.equal(again.body.code, "ok");
      assert.equal(p.searches(), 7);
      const [back] = await status(app);
      assert.deepEqual(back, { name: "alpha", state: "ready" });
    } finally {
      await p.server.close();
    }
  });

  it("each failed probe doubles the suspension, up to 120 s", async () => {
    const p = await provider("alpha");
    const c = clock();
    const app = withApp([{ name: "alpha", endpoint: p.server.url }], c);
    try {
      p.mode = { kind: "fail", status: 503 };
      for (let i = 0; i < 5; i++) await search(app);
      let seconds = 5;
      let failures = 5;
      for (const next of [10, 20, 40, 80, 120, 120]) {
        c.t += seconds * 1000;
        const probe = await search(app, { view: "full" });
        failures++;
        assert.match(
          attemptOf(probe.body, "alpha").message,
          new RegExp(`; suspended for ${next} s after its probe failed \\(${failures} consecutive`),
        );
        const skipped = await search(app);
        assert.equal(skipped.body.retry_after_ms, next * 1000);
        seconds = next;
      }
      assert.equal(p.searches(), 5 + 6, "one probe per suspension, nothing in between");
    } finally {
      await p.server.close();
    }
  });

  it("a 429 or 503 with a wait suspends the provider for that wait, at most 120 s", async () => {
    const cases = [
      { status: 429, retryAfter: "30", expect: 30_000 },
      { status: 503, retryAfter: "600", expect: 120_000 },
    ];
    for (const { status: code, retryAfter, expect } of cases) {
      const p = await provider("alpha");
      const c = clock();
      const app = withApp([{ name: "alpha", endpoint: p.server.url }], c);
      try {
        p.mode = { kind: "fail", status: code, headers: { "retry-after": retryAfter } };
        const first = await search(app, { view: "full" });
        assert.match(
          attemptOf(first.body, "alpha").message,
          new RegExp(`; suspended for ${expect / 1000} s as it asked$`),
        );
        const next = await search(app);
        assert.equal(next.body.retry_after_ms, expect, `HTTP ${code}`);
        assert.equal(next.res.headers.get("retry-after"), String(expect / 1000));
        assert.equal(p.searches(), 1);
        c.t += expect;
        p.mode = { kind: "ok" };
        assert.equal((await search(app)).body.code, "ok");
        assert.equal(p.searches(), 2);
      } finally {
        await p.server.close();
      }
    }
  });

  it("one success resets both the failure count and the backoff", async () => {
    const p = await provider("alpha");
    const c = clock();
    const app = withApp([{ name: "alpha", endpoint: p.server.url }], c);
    try {
      p.mode = { kind: "fail", status: 500 };
      for (let i = 0; i < 4; i++) await search(app);
      p.mode = { kind: "ok" };
      await search(app);
      p.mode = { kind: "fail", status: 500 };
      for (let i = 0; i < 4; i++) await search(app);
      assert.deepEqual(await status(app), [
        { name: "alpha", state: "ready", consecutive_failures: 4 },
      ]);
      const fifth = await search(app, { view: "full" });
      assert.match(attemptOf(fifth.body, "alpha").message, /suspended for 5 s after 5 consecutive/);

      // The probe succeeds: the next run of failures starts from 5 s again, not 10 s.
      c.t += 5_000;
      p.mode = { kind: "ok" };
      assert.equal((await search(app)).body.code, "ok");
      p.mode = { kind: "fail", status: 500 };
      for (let i = 0; i < 4; i++) await search(app);
      const again = await search(app, { view: "full" });
      assert.match(attemptOf(again.body, "alpha").message, /suspended for 5 s after 5 consecutive/);
      assert.equal(p.searches(), 4 + 1 + 5 + 1 + 5);
    } finally {
      await p.server.close();
    }
  });

  it("when a suspension ends exactly one probe goes through; others skip until it answers", async () => {
    const p = await provider("alpha");
    const c = clock();
    const app = withApp([{ name: "alpha", endpoint: p.server.url }], c);
    try {
      p.mode = { kind: "fail", status: 500 };
      for (let i = 0; i < 5; i++) await search(app);
      c.t += 5_000;
      p.mode = { kind: "hold" };
      const probe = search(app);
      await waitFor("the probe to reach the provider", () => p.held.length === 1);
      for (let i = 0; i < 3; i++) {
        // Other searches: an identical one would join the probe in flight.
        const other = await search(app, { q: `other ${i}` });
        assert.equal(other.body.code, "all_providers_failed");
        const [skip] = other.body.result.decision.skipped;
        assert.equal(skip.reason, "suspended");
        assert.ok(Date.parse(skip.until) > Date.now(), "until: the probe's deadline at the latest");
      }
      assert.equal(p.searches(), 6, "only the probe was sent");
      const [shown] = await status(app);
      assert.equal(shown?.state, "suspended");

      releaseHeld(p, "alpha");
      assert.equal((await probe).body.code, "ok");
      p.mode = { kind: "ok" };
      assert.equal((await search(app)).body.code, "ok");
      assert.equal(p.searches(), 7);
    } finally {
      await p.server.close();
    }
  });

  it("a caller's deadlines, departures and our own queue never suspend a provider", async () => {
    const p = await provider("alpha");
    const c = clock();
    const app = withApp([{ name: "alpha", endpoint: p.server.url }], c);
    try {
      p.mode = { kind: "hold" };
      for (let i = 0; i < 6; i++) {
        const { body } = await search(app, { timeout_ms: "40", view: "full" });
        assert.equal(attemptOf(body, "alpha").budget, "caller_deadline");
      }
      for (let i = 0; i < 6; i++) {
        const caller = new AbortController();
        const before = p.searches();
        const pending = Promise.resolve(
          app.request("/v1/search?q=x&view=full", { signal: caller.signal }),
        );
        await waitFor("the search to reach the provider", () => p.searches() === before + 1);
        caller.abort();
        const res = await pending.catch(() => null);
        if (res !== null) {
          const body = assertEnvelope(await res.json());
          assert.equal(attemptOf(body, "alpha").outcome, "cancelled");
        }
      }
      assert.deepEqual(await status(app), [{ name: "alpha", state: "ready" }]);
      const before = p.searches();
      await search(app, { timeout_ms: "40" });
      assert.equal(p.searches(), before + 1, "still contacted");
    } finally {
      await p.server.close();
    }

    // One place for six searches: only the one that reached the provider counts its timeout.
    const q = await provider("queued");
    const app2 = withApp([
      { name: "queued", endpoint: q.server.url, timeout_seconds: 0.2, max_concurrency: 1 },
    ], c);
    try {
      q.mode = { kind: "hold" };
      const all = await Promise.all(
        Array.from({ length: 6 }, () => search(app2, { view: "full" })),
      );
      for (const { body } of all) {
        const attempt = attemptOf(body, "queued");
        assert.equal(attempt.outcome, "timeout");
        assert.equal(attempt.budget, "provider_timeout");
      }
      assert.deepEqual(await status(app2), [
        { name: "queued", state: "ready", consecutive_failures: 1 },
      ]);
    } finally {
      await q.server.close();
    }
  });

  it("when every selected provider is suspended the search says when the first comes back", async () => {
    const a = await provider("alpha");
    const b = await provider("beta");
    const c = clock();
    const app = withApp([
      { name: "alpha", endpoint: a.server.url },
      { name: "beta", endpoint: b.server.url },
    ], c);
    try {
      a.mode = { kind: "fail", status: 500 };
      b.mode = { kind: "fail", status: 429, headers: { "retry-after": "10" } };
      for (let i = 0; i < 5; i++) await search(app);
      assert.equal(a.searches(), 5);
      assert.equal(b.searches(), 1, "beta asked for 10 s after the first search");
      c.t += 2_000;
      const { res, body } = await search(app);
      assert.equal(res.status, 503);
      assert.equal(body.code, "all_providers_failed");
      assert.equal(body.action, "retry");
      assert.equal(body.retryable, true);
      assert.equal(body.retry_after_ms, 3_000, "alpha's suspension ends first");
      const skipped = body.result.decision.skipped as Array<{ provider: string; until: string }>;
      assert.deepEqual(skipped.map((s) => s.provider), ["alpha", "beta"]);
      assert.ok(Date.parse(skipped[0]!.until) < Date.parse(skipped[1]!.until));
      assert.deepEqual(body.result.candidates, [], "nobody was contacted");
    } finally {
      await a.server.close();
      await b.server.close();
    }
  });

  it("tracefetch status and doctor name a suspended provider with its end and its failures", async () => {
    const p = await provider("alpha");
    const c = clock();
    const app = withApp([
      { name: "alpha", endpoint: p.server.url },
      { name: "beta", endpoint: p.server.url, scope: "other" },
    ], c);
    try {
      p.mode = { kind: "fail", status: 500 };
      for (let i = 0; i < 5; i++) await search(app, { providers: "alpha" });
      const [shown] = await status(app);
      const ctx = cliContext(app);
      const statusReply = await statusCommand(["--gateway", "http://127.0.0.1:9"], ctx);
      assert.equal(statusReply.kind, "envelope");
      if (statusReply.kind !== "envelope") return;
      const rendered = statusReply.render?.(NO_PAINT) ?? "";
      assert.match(
        rendered,
        new RegExp(`alpha +suspended +until ${shown?.until}, after 5 consecutive failures`),
      );
      assert.match(rendered, /beta +ready\n/);

      const doctor = await doctorCommand(["--gateway", "http://127.0.0.1:9"], ctx);
      assert.equal(doctor.kind, "envelope");
      if (doctor.kind !== "envelope") return;
      const gatewayCheck = (doctor.envelope.result as { checks: Array<{ check: string }> }).checks
        .find((k) => k.check === "gateway") as { ok: boolean; message: string } | undefined;
      assert.equal(gatewayCheck?.ok, true);
      assert.match(
        gatewayCheck?.message ?? "",
        new RegExp(
          `1 of 2 providers ready; suspended: alpha until ${shown?.until} \\(5 consecutive`,
        ),
      );
    } finally {
      await p.server.close();
    }
  });
});

/** A CLI context whose fetch reaches the gateway in process, with an empty configuration folder. */
function cliContext(app: ReturnType<typeof gateway>): CliContext {
  const never = () => {
    throw new Error("not used");
  };
  return {
    env: { XDG_CONFIG_HOME: "/nonexistent-tracefetch-test-config", NO_COLOR: "1" },
    // doctor checks the environment as a gateway would: this one, with nothing set.
    settings: (overrides = {}) => readSettings({ ...overrides }),
    machine: true,
    requestId: "test",
    stdin: never,
    writeStderr: () => {},
    stdinIsTTY: false,
    stderrIsTTY: false,
    stderrPaint: NO_PAINT,
    fetch: (input, init) => Promise.resolve(app.fetch(new Request(input, init))),
    confirm: () => Promise.resolve(false),
    interrupted: never,
    writeStdout: () => {},
  };
}
