/**
 * The answer cache in one instance's memory (docs/envelope.md, "Cached answers"): the adapter
 * contract, the LRU's bound, and the gateway's scenarios with one app as both instances.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { AnswerLru, MemoryAnswerCache } from "../src/state/answer-cache.ts";
import { PlacedAnswers } from "../src/gateway/answer-places.ts";
import { answerCacheContract } from "./support/answer-cache-contract.ts";
import {
  type AppPair,
  type CacheWorld,
  cacheWorld,
  failureNeverCached,
  privateStaysWithItsCaller,
  refreshDrops,
  repeatIsCached,
  searchesAt,
} from "./support/answer-cache-scenarios.ts";
import { assertEnvelope, gateway, post } from "./support/gateway.ts";
import { answer, startServer } from "./support/servers.ts";
import { createGateway } from "../src/http/mod.ts";
import { manifestOf, settingsFor } from "./support/gateway.ts";
import { answerCacheHook } from "../src/gateway/answer-cache-hook.ts";
import type { AttemptRecord } from "../src/protocol/envelope-schema.ts";
import type { ProviderSpec } from "../src/protocol/manifest-schema.ts";
import { MAX_CACHED_ANSWER_BYTES } from "../src/protocol/state-limits.ts";
import * as v from "valibot";
import { type Trace, TraceSchema } from "../src/protocol/trace-schema.ts";
import type { TraceSink } from "../src/protocol/trace-sink.ts";
import { runCli, runJson } from "./support/cli.ts";
import { cacheVariables } from "../src/config/cache-settings.ts";
import { ConfigError } from "../src/protocol/config-error.ts";

/** How long a trace may take to reach its sink after its answer, on a busy machine. */
const TRACE_WAIT_MS = 5_000;

const now = () => performance.now();

describe("MemoryAnswerCache keeps the adapter contract", () => {
  answerCacheContract(() => ({
    a: new MemoryAnswerCache(1 << 20, now),
    b: new MemoryAnswerCache(1 << 20, now),
    shares: false,
  }));
});

describe("the memory LRU", () => {
  it("stays within its bytes, dropping the entry used longest ago first", () => {
    const lru = new AnswerLru(100, now);
    lru.set("a", "x".repeat(20), 60_000); // 42 bytes
    lru.set("b", "y".repeat(20), 60_000);
    assert.equal(lru.get("a")?.text.length, 20, "a is now the most recent");
    lru.set("c", "z".repeat(20), 60_000);
    assert.ok(lru.bytes <= 100, `${lru.bytes} bytes`);
    assert.equal(lru.get("b"), null, "b, used longest ago, went first");
    assert.notEqual(lru.get("a"), null);
    assert.notEqual(lru.get("c"), null);
  });

  it("keeps nothing larger than its whole bound", () => {
    const lru = new AnswerLru(10, now);
    lru.set("big", "x".repeat(10), 60_000);
    assert.equal(lru.get("big"), null);
    assert.equal(lru.bytes, 0);
  });
});

describe("a gateway caching in its own memory", () => {
  let world: CacheWorld;
  let pair: AppPair;
  before(async () => {
    world = await cacheWorld();
    const settings = settingsFor(manifestOf(world.entries), world.env, {
      describeProviders: false,
      allowLoopback: true,
    });
    const app = createGateway(settings);
    pair = { a: app, b: app };
  });
  after(() => world.close());

  it("a repeated search reaches the provider once and says cached; max_age_seconds=0 asks again", () =>
    repeatIsCached(pair, world));

  it("a failing answer is never served from the cache", () => failureNeverCached(pair, world));

  it("a token provider's cached answer is served to the same sub and entitlements only", async () => {
    const { elsewhere, contacts } = await privateStaysWithItsCaller(pair, world);
    // One instance here: alice's second instance is the first one.
    assert.equal(elsewhere.result.candidates[0].cached, true);
    assert.equal(contacts(), 3);
  });

  it("a refresh of the provider drops its cached answers", () => refreshDrops(pair, world));
});

describe("max_age_seconds", () => {
  it("is an integer from 0 to 86400 in the body and the query, else invalid_field", async () => {
    const server = await startServer(answer("p", "p", []));
    try {
      const app = gateway([{ name: "p", endpoint: server.url, cache_ttl_seconds: 60 }]);
      for (const bad of [-1, 86_401, 1.5, "5"]) {
        const { res, body } = await post(app, JSON.stringify({ query: "x", max_age_seconds: bad }));
        assert.equal(res.status, 400);
        assert.equal(body.code, "invalid_field");
        assert.equal(body.error.field, "max_age_seconds");
      }
      for (const bad of ["-1", "86401", "x"]) {
        const res = await app.request(`/v1/search?q=x&max_age_seconds=${bad}`);
        const body = assertEnvelope(await res.json());
        assert.equal(body.code, "invalid_field", bad);
      }
      const ok = await post(app, JSON.stringify({ query: "x", max_age_seconds: 86_400 }));
      assert.equal(ok.body.code, "ok");
      assert.equal(searchesAt(server), 1);
    } finally {
      await server.close();
    }
  });

  it("is part of the coalescing identity", async () => {
    let calls = 0;
    const reply = answer("slow", "slow", [{ title: "t", locator: "https://s.example/1" }]);
    const server = await startServer((req, res, body) => {
      calls++;
      setTimeout(() => void reply(req, res, body), 150);
    });
    try {
      const app = gateway([{ name: "slow", endpoint: server.url, cache_ttl_seconds: 60 }]);
      const [fresh, any] = await Promise.all([
        app.request("/v1/search?q=same&max_age_seconds=0"),
        app.request("/v1/search?q=same&max_age_seconds=60"),
      ]);
      const bodies = [await fresh.json(), await any.json()];
      assert.deepEqual(bodies.map((b) => b.result.decision.coalesced), [false, false]);
      assert.equal(calls, 2);
    } finally {
      await server.close();
    }
  });
});

describe("what a search keeps", () => {
  const spec = (over: Record<string, unknown> = {}) =>
    settingsFor(
      manifestOf([{ name: "p", endpoint: "http://127.0.0.1:9/s", cache_ttl_seconds: 60, ...over }]),
      {},
      { allowLoopback: true },
    ).manifest.providers[0] as ProviderSpec;
  const request = { query: "q", scope: null, providers: null, limit: 10, tier: null } as const;
  const record = (over: Partial<AttemptRecord> = {}): AttemptRecord => ({
    provider: "p",
    scope: "p",
    source_class: "candidate",
    sensitivity: "public",
    latency_ms: 3,
    cost_micros: 0,
    outcome: "success",
    code: "ok",
    retryable: false,
    message: "",
    candidate_count: 0,
    warnings: [],
    candidates: [],
    ...over,
  });
  /** Offers `kept` to a fresh cache through the hook; whether a later lookup finds it. */
  async function kept(offered: AttemptRecord, over: Record<string, unknown> = {}) {
    const cache = new PlacedAnswers(new MemoryAnswerCache(1 << 24, now), 1 << 24, now);
    const work: Array<Promise<void>> = [];
    const hook = answerCacheHook({
      cache,
      request: { ...request, view: "full", timeout_ms: 1000 },
      caller: { kind: "anonymous" },
      now,
      later: (w) => void work.push(w()),
    });
    const provider = spec(over);
    hook.open(provider)?.keep(offered);
    await Promise.all(work);
    const again = answerCacheHook({
      cache,
      request: { ...request, view: "full", timeout_ms: 1000 },
      caller: { kind: "anonymous" },
      now,
      later: () => {},
    });
    return (await again.open(provider)?.hit) ?? null;
  }

  it("a success is kept, an honest empty included, and comes back cached with its age", async () => {
    const found = await kept(record());
    assert.equal(found?.cached, true);
    assert.equal(typeof found?.age_ms, "number");
  });

  it("a failure is never kept", async () => {
    const failed = record({ outcome: "search_failed", code: "provider_error" as never });
    delete failed.candidates;
    assert.equal(await kept(failed), null);
  });

  it("a record over 256 KiB of JSON is not kept", async () => {
    const big = record({ message: "x".repeat(MAX_CACHED_ANSWER_BYTES) });
    assert.equal(await kept(big), null);
    const wide = record({ message: "é".repeat(MAX_CACHED_ANSWER_BYTES / 2) });
    assert.equal(await kept(wide), null, "counted in UTF-8 bytes");
  });

  it("a provider without cache_ttl_seconds is never looked up", () => {
    const hook = answerCacheHook({
      cache: new PlacedAnswers(new MemoryAnswerCache(1 << 20, now), 1 << 20, now),
      request: { ...request, view: "full", timeout_ms: 1000 },
      caller: { kind: "anonymous" },
      now,
      later: () => {},
    });
    assert.equal(hook.open(spec({ cache_ttl_seconds: 0 })), null);
  });
});

describe("a search trace", () => {
  it("marks an attempt answered from the cache, and validates against the trace schema", async () => {
    const server = await startServer(
      answer("p", "p", [{ title: "t", locator: "https://p.example/1" }]),
    );
    const traces: Trace[] = [];
    const sink: TraceSink = {
      kind: "file",
      write: (entries) => {
        for (const entry of entries) traces.push(entry.trace as Trace);
        return Promise.resolve();
      },
    };
    try {
      const app = gateway([{ name: "p", endpoint: server.url, cache_ttl_seconds: 60 }], {
        env: {
          TRACEFETCH_MINING_CONFIRMED: "1",
          TRACEFETCH_TRACE_SECRET: "a trace secret of at least 32 bytes!",
          TRACEFETCH_TRACE_FILE: "unused",
        },
        ports: { traceSink: sink },
      });
      for (let i = 1; i <= 2; i++) {
        await (await app.request("/v1/search?q=traced")).text();
        // A trace is written after its answer: each is waited for, so they arrive in order.
        const deadline = performance.now() + TRACE_WAIT_MS;
        while (traces.length < i && performance.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      }
      assert.equal(traces.length, 2);
      assert.equal(traces[0]?.attempts[0]?.cached, undefined);
      assert.equal(traces[1]?.attempts[0]?.cached, true);
      for (const trace of traces) assert.ok(v.safeParse(TraceSchema, trace).success);
    } finally {
      await server.close();
    }
  });
});

describe("tracefetch search --max-age-seconds", () => {
  it("is refused out of range as invalid_field, and sent to the gateway as max_age_seconds", async () => {
    const bad = await runJson(["search", "x", "--max-age-seconds", "86401"]);
    assert.equal(bad.envelope.code, "invalid_field");
    assert.equal(bad.envelope.error.field, "max_age_seconds");
    let sent: unknown = null;
    const fake = await startServer((_req, res, body) => {
      sent = JSON.parse(body);
      res.writeHead(400, { "content-type": "application/json" });
      res.end(JSON.stringify({ code: "x" }));
    });
    try {
      await runCli([
        "search",
        "x",
        "--max-age-seconds",
        "0",
        "--gateway",
        `http://127.0.0.1:${fake.port}`,
      ]);
      assert.equal((sent as { max_age_seconds?: unknown } | null)?.max_age_seconds, 0);
    } finally {
      await fake.close();
    }
  });
});

describe("the cache's variables", () => {
  it("TRACEFETCH_CACHE_MAX_BYTES defaults to 64 MiB; TRACEFETCH_CACHE_URL must be redis:// and is never echoed", () => {
    assert.deepEqual(cacheVariables({}), { maxBytes: 64 * 1024 * 1024, url: null });
    assert.equal(cacheVariables({ TRACEFETCH_CACHE_MAX_BYTES: "1000" }).maxBytes, 1000);
    assert.throws(() => cacheVariables({ TRACEFETCH_CACHE_MAX_BYTES: "0" }), ConfigError);
    const url = "redis://user:hunter2@127.0.0.1:6380/1";
    assert.equal(cacheVariables({ TRACEFETCH_CACHE_URL: url }).url, url);
    assert.throws(
      () => cacheVariables({ TRACEFETCH_CACHE_URL: "http://user:hunter2@host/" }),
      (error: unknown) => error instanceof ConfigError && !error.message.includes("hunter2"),
    );
  });
});
