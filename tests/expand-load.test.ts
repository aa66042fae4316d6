/**
 * `POST /v1/expand` under load (docs/envelope.md, "Other routes"): the provider's `max_concurrency`
 * holds as the provider counts its open requests, time spent in the gateway's own queue is never
 * reported as the provider's failure, and a provider's timeout is retryable and named as such.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { PLACE_RETRY_AFTER_MS } from "../src/protocol/admission-limits.ts";
import { assertEnvelope, gateway } from "./support/gateway.ts";
import {
  type CountingProvider,
  countingProvider,
  evidenceOf,
} from "./support/counting-provider.ts";
import { sleep } from "./support/servers.ts";

const ON_DENO = "Deno" in globalThis;

async function expand(app: ReturnType<typeof gateway>, provider: string, locator: string) {
  const started = Date.now();
  const res = await app.request("/v1/expand", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ provider, locator }),
  });
  const body = assertEnvelope(await res.json());
  return { status: res.status, body, ms: Date.now() - started };
}

describe("POST /v1/expand under load", () => {
  const providers: CountingProvider[] = [];
  const provider = async (delayMs: number, name: string) => {
    const p = await countingProvider(delayMs, evidenceOf(name));
    providers.push(p);
    return p;
  };
  after(() => Promise.all(providers.map((p) => p.close())));

  it(
    "100 concurrent expands never open more than max_concurrency requests at the provider, and each answers within 4 s with 200 or retry",
    {
      timeout: 20_000,
    },
    async () => {
      const slow = await provider(1_500, "slow");
      const app = gateway([
        { name: "slow", endpoint: slow.url, max_concurrency: 4, timeout_seconds: 3 },
      ]);
      // Arrivals spread over a second, so deadlines fire one by one while others still wait.
      const answers = await Promise.all(Array.from({ length: 100 }, async (_, i) => {
        await sleep(i * 10);
        return await expand(app, "slow", `https://slow.example/${i}`);
      }));
      assert.ok(
        slow.maxOpen() <= 4,
        `${slow.maxOpen()} requests were open at the provider at once`,
      );
      const codes = new Map<string, number>();
      for (const { status, body, ms } of answers) {
        codes.set(body.code, (codes.get(body.code) ?? 0) + 1);
        assert.ok(ms < 4_000, `an answer took ${ms} ms`);
        if (status === 200) continue;
        assert.equal(body.retryable, true, JSON.stringify(body));
        assert.equal(body.action, "retry", JSON.stringify(body));
        assert.doesNotMatch(body.error.message, /went away/);
        if (body.code === "overloaded") {
          assert.equal(status, 429);
          assert.equal(body.retry_after_ms, PLACE_RETRY_AFTER_MS);
        } else {
          assert.equal(body.code, "provider_failed", JSON.stringify(body));
          assert.match(body.error.message, /did not answer within its timeout/);
        }
      }
      assert.ok((codes.get("ok") ?? 0) >= 4, JSON.stringify([...codes]));
      assert.ok((codes.get("overloaded") ?? 0) > 0, JSON.stringify([...codes]));
      assert.ok(slow.received() < 100, "expands that found no place in time never reached it");
    },
  );

  it(
    "an expand that waits out its deadline in the queue answers overloaded (429, retry) and never reaches the provider",
    {
      timeout: 10_000,
    },
    async () => {
      const stuck = await provider(60_000, "stuck");
      const app = gateway([
        { name: "stuck", endpoint: stuck.url, max_concurrency: 1, timeout_seconds: 1 },
      ]);
      const first = expand(app, "stuck", "https://stuck.example/1");
      await sleep(20);
      const second = await expand(app, "stuck", "https://stuck.example/2");
      assert.equal(second.status, 429);
      assert.equal(second.body.code, "overloaded");
      assert.equal(second.body.retryable, true);
      assert.equal(second.body.action, "retry");
      assert.equal(second.body.retry_after_ms, PLACE_RETRY_AFTER_MS);
      assert.match(second.body.error.message, /"stuck" is at its max_concurrency \(1\)/);
      assert.equal((await first).body.code, "provider_failed");
      assert.equal(stuck.received(), 1);
    },
  );

  it(
    "an expand that times out at the provider is provider_failed, retryable, action retry, naming the timeout",
    {
      timeout: 10_000,
    },
    async () => {
      const stuck = await provider(60_000, "stuck");
      const app = gateway([{ name: "stuck", endpoint: stuck.url, timeout_seconds: 1 }]);
      const { status, body, ms } = await expand(app, "stuck", "https://stuck.example/1");
      assert.equal(status, 502);
      assert.equal(body.code, "provider_failed");
      assert.equal(body.retryable, true);
      assert.equal(body.action, "retry");
      assert.equal(body.error.message, 'provider "stuck" did not answer within its timeout (1 s)');
      assert.ok(ms < 2_000, `answered after ${ms} ms`);
    },
  );

  it("an expand's deadline fires even after a garbage collection", {
    timeout: 10_000,
    skip: ON_DENO && "V8 flags are Node's here",
  }, async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const stuck = await provider(60_000, "stuck");
    const app = gateway([{ name: "stuck", endpoint: stuck.url, timeout_seconds: 1 }]);
    const pending = expand(app, "stuck", "https://stuck.example/1");
    for (let i = 0; i < 5; i++) {
      await sleep(50);
      gc();
    }
    const outcome = await Promise.race([pending, sleep(3_000).then(() => null)]);
    assert.notEqual(outcome, null, "the deadline never fired");
    assert.equal(outcome?.body.code, "provider_failed");
    assert.ok((outcome?.ms ?? Infinity) < 2_000);
  });
});
