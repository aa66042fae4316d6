import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createGateway } from "../src/http/mod.ts";
import { listen, type Listening } from "../src/runtime/node-listen.ts";
import { answer, sleep, startServer, type TestServer } from "./support/servers.ts";
import { assertEnvelope, manifestOf, settingsFor } from "./support/gateway.ts";
import { collect, frames, parse } from "./support/streams.ts";

const FAST = [{ title: "Fast page", locator: "https://shared.example/a" }, {
  title: "Only fast",
  locator: "https://fast.example/1",
}];
const SLOW = [{ title: "Slow page", locator: "https://www.shared.example/a/" }];
const SLOW_MS = 400;

describe("streaming search over a real HTTP connection", () => {
  let fast: TestServer;
  let slow: TestServer;
  let slowAnsweredAt = 0;
  let gateway: Listening;
  let base: string;

  before(async () => {
    fast = await startServer(answer("fast", "fast", FAST));
    slow = await startServer(async (req, res, body) => {
      await sleep(SLOW_MS);
      slowAnsweredAt = performance.now();
      await answer("slow", "slow", SLOW)(req, res, body);
    });
    const app = createGateway(settingsFor(
      manifestOf([{ name: "fast", endpoint: fast.url }, {
        name: "slow",
        endpoint: slow.url,
      }]),
      {},
      { describeProviders: false, allowLoopback: true, heartbeatMs: 100 },
    ));
    gateway = await listen(app.fetch);
    base = `http://127.0.0.1:${gateway.port}`;
  });
  after(async () => {
    await gateway.close();
    await fast.close();
    await slow.close();
  });

  for (const format of ["ndjson", "sse"] as const) {
    it(`${format}: plan, the fast provider before the slow one has answered, merged, then done last`, async () => {
      const accept = format === "ndjson" ? "application/x-ndjson" : "text/event-stream";
      const res = await fetch(`${base}/v1/search?q=page`, { headers: { accept } });
      assert.equal(res.status, 200);
      assert.match(
        res.headers.get("content-type") ?? "",
        format === "ndjson" ? /application\/x-ndjson/ : /text\/event-stream/,
      );
      const all = await collect(res.body!, format);
      const events = all.filter((a) =>
        a.event.event !== "heartbeat" && a.event.event !== "comment"
      );
      assert.deepEqual(events.map((e) => e.event.event), [
        "plan",
        "provider",
        "provider",
        "merged",
        "done",
      ]);
      const [plan, first, second, merged, done] = events.map((e) => e.event);
      const requestId = done!.request_id;
      for (const e of events) assert.equal(e.event.request_id, requestId);
      assert.deepEqual((plan!.decision as { providers: string[] }).providers, ["fast", "slow"]);
      assert.equal((first!.attempt as { provider: string }).provider, "fast");
      assert.equal(first!.index, 0);
      assert.ok(
        events[1]!.at < slowAnsweredAt,
        "the fast provider's event arrived before the slow provider answered",
      );
      assert.equal((second!.attempt as { provider: string }).provider, "slow");
      assert.equal(second!.index, 1);
      const mergedList = merged!.merged as Array<{ found_by: string[] }>;
      assert.deepEqual(mergedList[0]!.found_by, ["fast", "slow"]);
      // The heartbeat fired while waiting on the slow provider (every 100 ms here).
      assert.ok(all.some((a) => a.event.event === (format === "ndjson" ? "heartbeat" : "comment")));
      // done is the whole envelope, less the lists that were already streamed.
      const { event: _event, ...envelope } = done!;
      assertEnvelope(envelope);
      const result = envelope.result as Record<string, unknown>;
      assert.equal(result.merged, undefined);
      assert.equal(result.candidates, undefined);
      assert.equal(envelope.code, "ok");
    });
  }

  it("the done event and the non-streaming answer describe the same search", async () => {
    const plain = assertEnvelope(await (await fetch(`${base}/v1/search?q=page`)).json());
    const res = await fetch(`${base}/v1/search?q=page&stream=ndjson`);
    const events = (await collect(res.body!, "ndjson")).map((a) => a.event).filter((e) =>
      e.event !== "heartbeat"
    );
    const done = events.at(-1)!;
    const merged = events.find((e) => e.event === "merged")!.merged;
    const attempts = events.filter((e) => e.event === "provider").sort((a, b) =>
      Number(a.index) - Number(b.index)
    )
      .map((e) => e.attempt);
    const stable = (x: unknown) =>
      JSON.parse(JSON.stringify(x, (k, v) => (k === "latency_ms" || k === "request_id" ? 0 : v)));
    assert.deepEqual(stable(merged), stable(plain.result.merged));
    assert.deepEqual(stable(attempts), stable(plain.result.candidates));
    const { event: _e, ...header } = done;
    const { merged: _m, candidates: _c, ...rest } = plain.result;
    assert.deepEqual(stable({ ...header }), stable({ ...plain, result: rest }));
  });

  it("a refused request gets an ordinary 4xx envelope, not a stream", async () => {
    const before = fast.requests.length;
    const res = await fetch(`${base}/v1/search?q=page&limit=0`, {
      headers: { accept: "application/x-ndjson" },
    });
    assert.equal(res.status, 400);
    assert.match(res.headers.get("content-type") ?? "", /application\/json/);
    const body = assertEnvelope(await res.json());
    assert.equal(body.code, "limit_out_of_range");
    assert.equal(fast.requests.length, before);
  });

  it("an unknown stream format is refused with invalid_field", async () => {
    const res = await fetch(`${base}/v1/search?q=page&stream=xml`);
    assert.equal(res.status, 400);
    assert.equal(assertEnvelope(await res.json()).code, "invalid_field");
  });

  it("Server-Timing has one entry per attempt and one for fusion", async () => {
    const res = await fetch(`${base}/v1/search?q=page`);
    await res.text();
    const timing = res.headers.get("server-timing") ?? "";
    const names = timing.split(",").map((e) => e.trim().split(";")[0]);
    assert.deepEqual(names, ["p_fast", "p_slow", "fusion"]);
    assert.match(timing, /p_slow;dur=\d+;desc="success"/);
  });
});

describe("a caller that disconnects stops costing anything upstream", () => {
  for (const mode of ["ndjson", "plain"] as const) {
    it(`${mode}: every in-flight provider request is closed within 200 ms of the disconnect`, async () => {
      const closedAt: number[] = [];
      const hang = () =>
        startServer((req) => {
          req.socket.once("close", () => closedAt.push(performance.now()));
        });
      const a = await hang();
      const b = await hang();
      const app = createGateway(settingsFor(
        manifestOf([
          { name: "a", endpoint: a.url, timeout_seconds: 30 },
          { name: "b", endpoint: b.url, timeout_seconds: 30 },
        ]),
        {},
        { describeProviders: false, allowLoopback: true },
      ));
      const gw = await listen(app.fetch);
      try {
        const caller = new AbortController();
        const url = `http://127.0.0.1:${gw.port}/v1/search?q=x${
          mode === "ndjson" ? "&stream=ndjson" : ""
        }`;
        const res = fetch(url, { signal: caller.signal });
        if (mode === "ndjson") {
          const body = (await res).body!;
          const first = await frames(body, "ndjson").next();
          assert.equal(parse(first.value!.raw, "ndjson").event, "plan");
        }
        // Wait until both providers hold a request, then go away.
        for (let i = 0; i < 100 && (a.requests.length === 0 || b.requests.length === 0); i++) {
          await sleep(10);
        }
        assert.equal(a.requests.length + b.requests.length, 2);
        const leftAt = performance.now();
        caller.abort();
        await res.catch(() => {});
        for (let i = 0; i < 50 && closedAt.length < 2; i++) await sleep(10);
        assert.equal(closedAt.length, 2, "both provider connections were closed");
        for (const t of closedAt) {
          assert.ok(t - leftAt < 200, `closed ${Math.round(t - leftAt)} ms after the disconnect`);
        }
      } finally {
        await gw.close();
        await a.close();
        await b.close();
      }
    });
  }
});
