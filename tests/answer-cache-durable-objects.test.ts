/**
 * The Durable Objects adapter of the answer cache (src/state/durable-cache.ts) and the step its
 * objects run (src/state/cache-object.ts), in this process: each object's storage a Map with the
 * synchronous key-value API's shape, so the adapter contract, the bounds and the failures are
 * checked without workerd. The same code in workerd, two workers over one namespace, is
 * tests/workerd/answer-cache-durable-objects.test.ts. Runs unchanged under Node and `deno test`.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { type CacheAsk, cacheStep, type CacheStorage } from "../src/state/cache-object.ts";
import { type CacheNamespace, DurableAnswerCache } from "../src/state/durable-cache.ts";
import {
  MAX_CACHE_OBJECT_BYTES,
  MAX_CACHE_OBJECT_ENTRIES,
  STORE_RETRY_MS,
} from "../src/protocol/state-limits.ts";
import { answerCacheContract } from "./support/answer-cache-contract.ts";
import { PlacedAnswers } from "../src/gateway/answer-places.ts";
import { StoreGuard } from "../src/state/store-guard.ts";

const SECRET = "a test secret of at least 32 bytes!";

/** One object's storage: keys listed in order, as the key-value API lists them. */
function memoryStorage(): CacheStorage & { map: Map<string, unknown>; alarm: number | null } {
  const map = new Map<string, unknown>();
  return {
    map,
    alarm: null,
    kv: {
      get: <T>(key: string) => map.get(key) as T | undefined,
      put: (key, value) => void map.set(key, structuredClone(value)),
      delete: (key) => map.delete(key),
      list: <T>({ prefix }: { prefix: string }) =>
        [...map.entries()].filter(([k]) => k.startsWith(prefix)).sort(([a], [b]) =>
          a < b ? -1 : 1
        ) as Array<[string, T]>,
    },
    getAlarm() {
      return Promise.resolve(this.alarm);
    },
    setAlarm(at) {
      this.alarm = at;
      return Promise.resolve();
    },
    deleteAll() {
      map.clear();
      this.alarm = null;
      return Promise.resolve();
    },
  };
}

/** A namespace of objects by name, each answering `answers` with cacheStep, as workerd would. */
function memoryNamespace() {
  const objects = new Map<string, { storage: ReturnType<typeof memoryStorage> }>();
  const namespace: CacheNamespace = {
    idFromName: (name) => name,
    get: (id) => ({
      answers: (ask: CacheAsk) => {
        const name = id as string;
        if (!objects.has(name)) objects.set(name, { storage: memoryStorage() });
        // Across RPC, as JSON: nothing the caller holds is shared with the object.
        return cacheStep(objects.get(name)!, structuredClone(ask));
      },
    }),
  };
  return { namespace, objects };
}

const cacheOver = (namespace: CacheNamespace, timeoutMs = 250) =>
  new DurableAnswerCache(namespace, {
    secret: SECRET,
    calls: new StoreGuard({ timeoutMs, now: () => performance.now() }),
  });

describe("DurableAnswerCache keeps the adapter contract", () => {
  const { namespace } = memoryNamespace();
  answerCacheContract(() => ({ a: cacheOver(namespace), b: cacheOver(namespace), shares: true }));
});

describe("a provider's cache object", () => {
  it("stores public answers under an HMAC digest, never the identity, and no private answer", async () => {
    const { namespace, objects } = memoryNamespace();
    const cache = new PlacedAnswers(cacheOver(namespace), 1 << 20, () => performance.now());
    const identity = '{"request":{"query":"a secret query"}}';
    await cache.keep(
      "open",
      identity,
      await cache.lookup("open", identity, true),
      "t",
      60_000,
      true,
    );
    await cache.keep(
      "own",
      identity,
      await cache.lookup("own", identity, false),
      "o",
      60_000,
      false,
    );
    const open = [...objects.get("cache:open")!.storage.map.keys()];
    assert.equal(open.length, 2);
    assert.ok(
      open.every((key) => key === "generation" || /^answer:[0-9a-f]{64}$/.test(key)),
      `${open}`,
    );
    assert.deepEqual([...objects.get("cache:own")!.storage.map.keys()], ["generation"]);
    assert.ok(objects.get("cache:open")!.storage.alarm !== null, "an alarm will sweep it");
  });

  it(`keeps at most ${MAX_CACHE_OBJECT_ENTRIES} answers and ${MAX_CACHE_OBJECT_BYTES} bytes, the oldest evicted first`, async () => {
    const ctx = { storage: memoryStorage() };
    const { generation } = await cacheStep(ctx, { op: "lookup", digest: "" });
    const put = (digest: string, text: string) =>
      cacheStep(ctx, { op: "store", generation, digest, text, ttlMs: 60_000 });
    for (let i = 0; i <= MAX_CACHE_OBJECT_ENTRIES; i++) await put(`d${i}`, "x");
    const answers = () => [...ctx.storage.map.keys()].filter((k) => k.startsWith("answer:"));
    assert.equal(answers().length, MAX_CACHE_OBJECT_ENTRIES);
    assert.equal((await cacheStep(ctx, { op: "lookup", digest: "d0" })).found, null, "oldest gone");
    assert.equal((await cacheStep(ctx, { op: "lookup", digest: "d1" })).found?.text, "x");
    // Four answers of a quarter of the bound each: the fourth makes room by evicting the oldest.
    const large = "y".repeat(MAX_CACHE_OBJECT_BYTES / 4);
    for (let i = 0; i < 4; i++) await put(`big${i}`, large);
    assert.equal((await cacheStep(ctx, { op: "lookup", digest: "big0" })).found, null);
    assert.equal((await cacheStep(ctx, { op: "lookup", digest: "big3" })).found?.text, large);
    assert.equal((await cacheStep(ctx, { op: "lookup", digest: "d1" })).found, null);
  });

  it("a refresh deletes every answer and replaces the generation", async () => {
    const ctx = { storage: memoryStorage() };
    const { generation } = await cacheStep(ctx, { op: "lookup", digest: "" });
    await cacheStep(ctx, { op: "store", generation, digest: "d", text: "x", ttlMs: 60_000 });
    const after = await cacheStep(ctx, { op: "refresh" });
    assert.notEqual(after.generation, generation);
    assert.deepEqual([...ctx.storage.map.keys()], ["generation"]);
    await cacheStep(ctx, { op: "store", generation, digest: "d", text: "late", ttlMs: 60_000 });
    assert.equal((await cacheStep(ctx, { op: "lookup", digest: "d" })).found, null);
  });
});

describe("a cache object that fails or hangs is a miss", () => {
  for (
    const [what, answers] of [
      ["fails", () => Promise.reject(new Error("object reset"))],
      ["hangs", () => new Promise<never>(() => {})],
    ] as const
  ) {
    it(`an object that ${what}: a miss within the timeout, a store that does nothing`, async () => {
      let calls = 0;
      const namespace: CacheNamespace = {
        idFromName: (name) => name,
        get: () => ({ answers: () => (calls++, answers()) }),
      };
      const cache = cacheOver(namespace, 50);
      const started = performance.now();
      const lookup = await cache.lookup("open", "id");
      assert.deepEqual(lookup, { generation: null, found: null });
      await cache.store("open", "id", lookup, "text", 60_000);
      await cache.invalidate("open");
      assert.ok(performance.now() - started < 1_000);
      assert.equal(calls, 1, `the objects are left alone for ${STORE_RETRY_MS} ms after a failure`);
    });
  }
});
