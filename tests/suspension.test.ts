/**
 * Provider suspension (docs/protocol.md, "Suspension"): real providers on 127.0.0.1 that fail on
 * demand, and an injected clock, so a suspension ends without waiting for it. The gateway's own
 * probe confirms failures and ends suspensions; tests/suspension-probe.test.ts covers the probe,
 * tests/suspension-status.test.ts what the CLI shows.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { assertEnvelope, search } from "./support/gateway.ts";
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

/** The note on the attempt whose failure set off the gateway's probe. */
const PROBING = /; 5 consecutive failures: the gateway probes it before suspending it$/;

describe("suspension", () => {
  it("5 failures in a row and a failed probe of the gateway's own suspend a provider: not contacted during its suspension, back once its next probe succeeds", async () => {
    const p = await provider("alpha");
    const c = clock();
    const app = withApp([{ name: "alpha", endpoint: p.server.url }], c);
    try {
      p.mode = { kind: "fail", status: 500 };
      for (let i = 1; i <= 4; i++) {
        const { body } = await search(app, { view: "full" });
        assert.doesNotMatch(attemptOf(body, "alpha").message, /suspended|probe/);
      }
      const fifth = await search(app, { view: "full" });
      assert.match(attemptOf(fifth.body, "alpha").message, PROBING);
      const shown = await shownAs(app, "alpha", "suspended");
      assert.equal(p.searches(), 6, "five searches and the gateway's probe");
      assert.deepEqual(p.probes(), [{ query: PROBE_QUERY, limit: 1, authorization: undefined }]);
      assert.equal(shown.consecutive_failures, 6, "the probe's failure counts too");
      assert.ok(Date.parse(shown.until ?? "") > Date.now(), "until lies ahead");

      c.t += 4_999;
      const during = await search(app, { view: "full" });
      assert.equal(p.searches(), 6, "not contacted while suspended");
      assert.equal(during.body.code, "all_providers_failed");
      assert.equal(during.body.retry_after_ms, 1);
      const skipped = during.body.result.decision.skipped;
      assert.equal(skipped.length, 1);
      assert.equal(skipped[0].provider, "alpha");
      assert.equal(skipped[0].reason, "suspended");
      assert.equal(skipped[0].until, shown.until);

      p.mode = { kind: "ok" };
      c.t += 1;
      // The first search after the end starts the probe and still skips the provider.
      const ended = await search(app);
      assert.equal(ended.body.code, "all_providers_failed");
      assert.equal(ended.body.result.decision.skipped[0].reason, "suspended");
      assert.deepEqual(await shownAs(app, "alpha", "ready"), { name: "alpha", state: "ready" });
      assert.equal(p.probes().length, 2);
      assert.equal((await search(app)).body.code, "ok");
      assert.equal((await search(app)).body.code, "ok");
      assert.equal(p.searches(), 9, "6, the probe that ended it, then two searches");
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
      let failures = 6;
      await waitFor(
        "the first probe to fail",
        async () => (await status(app))[0]?.consecutive_failures === failures,
      );
      assert.equal((await search(app)).body.retry_after_ms, 5_000);
      let seconds = 5;
      for (const next of [10, 20, 40, 80, 120, 120]) {
        c.t += seconds * 1000;
        const probing = await search(app);
        assert.equal(probing.body.result.decision.skipped[0].reason, "suspended");
        failures++;
        await waitFor(
          `the probe after ${seconds} s to fail`,
          async () => (await status(app))[0]?.consecutive_failures === failures,
        );
        const skipped = await search(app);
        assert.equal(skipped.body.retry_after_ms, next * 1000);
        seconds = next;
      }
      assert.equal(p.searches(), 5 + 7, "one probe per suspension, nothing in between");
      assert.equal(p.probes().length, 7);
    } finally {
      await p.server.close();
    }
  });

  it("a 429 or 503 with a wait suspends the provider for that wait, at most 120 s, without a probe", async () => {
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
        assert.equal((await search(app)).body.code, "all_providers_failed", "the probe decides");
        await shownAs(app, "alpha", "ready");
        assert.equal((await search(app)).body.code, "ok");
        assert.equal(p.searches(), 3);
        assert.equal(p.probes().length, 1);
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
      assert.match(attemptOf(fifth.body, "alpha").message, PROBING);
      await shownAs(app, "alpha", "suspended");
      assert.equal((await search(app)).body.retry_after_ms, 5_000);

      // The probe succeeds: the next run of failures starts from 5 s again, not 10 s.
      c.t += 5_000;
      p.mode = { kind: "ok" };
      await search(app);
      await shownAs(app, "alpha", "ready");
      p.mode = { kind: "fail", status: 500 };
      for (let i = 0; i < 4; i++) await search(app);
      const again = await search(app, { view: "full" });
      assert.match(attemptOf(again.body, "alpha").message, PROBING);
      await shownAs(app, "alpha", "suspended");
      assert.equal((await search(app)).body.retry_after_ms, 5_000);
      assert.equal(p.searches(), 4 + 1 + 5 + 1 + 1 + 5 + 1);
    } finally {
      await p.server.close();
    }
  });

  it("when a suspension ends the gateway probes it once, in the background; every search skips it until the probe answers", async () => {
    const p = await provider("alpha");
    const c = clock();
    const app = withApp([{ name: "alpha", endpoint: p.server.url }], c);
    try {
      p.mode = { kind: "fail", status: 500 };
      for (let i = 0; i < 5; i++) await search(app);
      await shownAs(app, "alpha", "suspended");
      c.t += 5_000;
      p.mode = { kind: "hold" };
      // Answered at once, while its probe is still held by the provider.
      const first = await search(app);
      assert.equal(first.body.code, "all_providers_failed");
      await waitFor("the probe to reach the provider", () => p.held.length === 1);
      for (let i = 0; i < 3; i++) {
        const other = await search(app, { q: `other ${i}` });
        assert.equal(other.body.code, "all_providers_failed");
        const [skip] = other.body.result.decision.skipped;
        assert.equal(skip.reason, "suspended");
        assert.ok(Date.parse(skip.until) > Date.now(), "until: the probe's deadline at the latest");
      }
      assert.equal(p.searches(), 7, "only the probes were sent");
      assert.deepEqual(p.probes().map((r) => r.query), [PROBE_QUERY, PROBE_QUERY]);
      assert.equal((await status(app))[0]?.state, "suspended");

      releaseHeld(p, "alpha");
      await shownAs(app, "alpha", "ready");
      p.mode = { kind: "ok" };
      assert.equal((await search(app)).body.code, "ok");
      assert.equal(p.searches(), 8);
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
        // At least one more: a search of the loop above, cut off by its deadline after sending its
        // request, may reach the provider late on a loaded machine and count too.
        await waitFor("the search to reach the provider", () => p.searches() > before);
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
      await shownAs(app, "alpha", "suspended");
      assert.equal(a.searches(), 6, "five searches and the gateway's probe");
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
});
