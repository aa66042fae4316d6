/**
 * What every answer cache adapter (src/state/answer-cache.ts) must do, as one case list run
 * against each: memory (tests/answer-cache.test.ts), Redis (tests/answer-cache-redis.test.ts) and
 * Durable Objects (tests/answer-cache-durable-objects.test.ts).
 * `pair` gives two instances: over one store when the adapter shares (Redis), else two memories.
 */
import { it } from "node:test";
import assert from "node:assert/strict";
import type { AnswerCache } from "../../src/state/answer-cache.ts";
import { PlacedAnswers } from "../../src/gateway/answer-places.ts";

export type CachePair = { a: AnswerCache; b: AnswerCache; shares: boolean };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Each instance's answers as the gateway places them: shared ones in the store, the others here. */
export function answerCacheContract(stores: () => CachePair): void {
  const pair = () => {
    const { a, b, shares } = stores();
    const placed = (store: AnswerCache) =>
      new PlacedAnswers(store, 1 << 20, performance.now.bind(performance));
    return { a: placed(a), b: placed(b), shares };
  };
  let n = 0;
  // Each case its own provider, so cases never see each other's entries.
  const fresh = () => `p${++n}-${crypto.randomUUID().slice(0, 8)}`;

  it("a miss, then the stored text with its age, under the same identity only", async () => {
    const { a } = pair();
    const provider = fresh();
    const first = await a.lookup(provider, '{"q":"x"}', true);
    assert.equal(first.found, null);
    await a.keep(provider, '{"q":"x"}', first, '{"answer":1}', 60_000, true);
    await sleep(5);
    const again = await a.lookup(provider, '{"q":"x"}', true);
    assert.equal(again.found?.text, '{"answer":1}');
    assert.ok(again.found !== null && again.found.ageMs >= 0 && again.found.ageMs < 5_000);
    assert.equal((await a.lookup(provider, '{"q":"y"}', true)).found, null);
  });

  it("a public answer stored by one instance is found by the other when the store is shared", async () => {
    const { a, b, shares } = pair();
    const provider = fresh();
    await a.keep(provider, "id", await a.lookup(provider, "id", true), "text", 60_000, true);
    assert.equal((await b.lookup(provider, "id", true)).found?.text, shares ? "text" : undefined);
  });

  it("an answer that is not shared stays in the instance that stored it", async () => {
    const { a, b } = pair();
    const provider = fresh();
    await a.keep(provider, "id", await a.lookup(provider, "id", false), "mine", 60_000, false);
    assert.equal((await a.lookup(provider, "id", false)).found?.text, "mine");
    assert.equal((await b.lookup(provider, "id", false)).found, null);
  });

  it("invalidate drops the provider's answers, shared and not, on every instance sharing a store", async () => {
    const { a, b, shares } = pair();
    const provider = fresh();
    await a.keep(provider, "pub", await a.lookup(provider, "pub", true), "p", 60_000, true);
    await a.keep(provider, "own", await a.lookup(provider, "own", false), "o", 60_000, false);
    const other = fresh();
    await a.keep(other, "pub", await a.lookup(other, "pub", true), "kept", 60_000, true);
    // The refresh runs where the shared store tells every instance; alone, on the same one.
    await (shares ? b : a).invalidate(provider);
    assert.equal((await a.lookup(provider, "pub", true)).found, null);
    assert.equal((await a.lookup(provider, "own", false)).found, null);
    assert.equal((await a.lookup(other, "pub", true)).found?.text, "kept", "others untouched");
  });

  it("an answer asked for before a refresh is not stored after it", async () => {
    const { a } = pair();
    const provider = fresh();
    for (const shared of [true, false]) {
      const before = await a.lookup(provider, "late", shared);
      await a.invalidate(provider);
      await a.keep(provider, "late", before, "stale", 60_000, shared);
      assert.equal((await a.lookup(provider, "late", shared)).found, null, `shared: ${shared}`);
    }
  });

  it("an answer is gone once its TTL has passed", async () => {
    const { a } = pair();
    const provider = fresh();
    for (const shared of [true, false]) {
      await a.keep(provider, "ttl", await a.lookup(provider, "ttl", shared), "t", 40, shared);
    }
    await sleep(80);
    assert.equal((await a.lookup(provider, "ttl", true)).found, null);
    assert.equal((await a.lookup(provider, "ttl", false)).found, null);
  });
}
