/**
 * The shared-state contract (src/state/shared-state.ts), one suite run against every adapter
 * (a shared store's through GuardedState, as the gateway uses it):
 * the same breaker steps (src/core/breaker.ts) whatever keeps them, probe results with their TTL
 * and lease, flights led by one instance and followed by another, and atomicity across instances.
 * A factory gives two instances over one store (`a` and `b`); for the memory adapter they are one
 * instance, which shares no flight, so the cases of flights across instances are for shared stores.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { BreakerEffect, BreakerEvent } from "../../src/core/breaker.ts";
import type { FlightEvent, SharedState } from "../../src/state/shared-state.ts";
import { searchLogCases } from "./search-log-contract.ts";

export type StateWorld = {
  a: SharedState;
  b: SharedState;
  /**
   * An instance that has read nothing yet, so it mirrors nothing: what a third instance would read
   * now (for the memory adapter, the one instance).
   */
  fresh: () => SharedState;
  close: () => Promise<void>;
};

export type StateFactory = {
  name: string;
  /** Whether `a` and `b` share one store (false: one instance's memory). */
  shared: boolean;
  /** Two instances over one fresh store (a new prefix or namespace per call). */
  make: () => Promise<StateWorld>;
};

const failure = (waitMs: number | null = null): BreakerEvent => ({
  kind: "attempt",
  verdict: { kind: "failure", waitMs },
});
const success: BreakerEvent = { kind: "attempt", verdict: { kind: "success" } };
/** A probe claim's length here: short, so its lapse can be waited for. */
const CLAIM_MS = 400;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function stepN(s: SharedState, name: string, event: BreakerEvent, n: number) {
  const effects: BreakerEffect[] = [];
  for (let i = 0; i < n; i++) effects.push(await s.stepBreaker(name, event, CLAIM_MS));
  return effects;
}

async function breakerOf(s: SharedState, name: string) {
  return (await s.breakers([name])).get(name)?.breaker ?? null;
}

export function stateContract(factory: StateFactory): void {
  describe(`shared state contract: ${factory.name}`, () => {
    let world: StateWorld;
    before(async () => {
      world = await factory.make();
    });
    after(async () => {
      await world?.close();
    });
    let n = 0;
    /** A provider name of its own for each case. */
    const fresh = () => `p${++n}-${Math.random().toString(36).slice(2, 8)}`;

    it("a provider no one failed has no breaker; a success keeps it so", async () => {
      const name = fresh();
      assert.equal(await breakerOf(world.fresh(), name), null);
      assert.deepEqual(await world.a.stepBreaker(name, success, CLAIM_MS), { kind: "none" });
      assert.equal(await breakerOf(world.fresh(), name), null);
    });

    it("the fifth retryable failure in a row claims the one probe, to confirm", async () => {
      const name = fresh();
      const effects = await stepN(world.a, name, failure(), 5);
      assert.deepEqual(effects.slice(0, 4).map((e) => e.kind), ["none", "none", "none", "none"]);
      const fifth = effects[4];
      assert.equal(fifth?.kind, "claimed");
      assert.equal(fifth?.kind === "claimed" && fifth.confirm, true);
      assert.equal(fifth?.kind === "claimed" && fifth.failures, 5);
      const b = await breakerOf(world.fresh(), name);
      assert.equal(b?.failures, 5);
      assert.notEqual(b?.probeUntil, null);
      // Another failure while the probe is out claims nothing more.
      assert.deepEqual(await world.b.stepBreaker(name, failure(), CLAIM_MS), { kind: "none" });
    });

    it("a failed probe suspends; a success during the suspension changes nothing", async () => {
      const name = fresh();
      const claimed = (await stepN(world.a, name, failure(), 5))[4];
      assert.equal(claimed?.kind, "claimed");
      if (claimed?.kind !== "claimed") return;
      const probed: BreakerEvent = {
        kind: "probed",
        epoch: claimed.epoch,
        probeUntil: claimed.probeUntil,
        verdict: { kind: "failure", waitMs: null },
      };
      await world.b.stepBreaker(name, probed, CLAIM_MS);
      const read = (await world.fresh().breakers([name])).get(name);
      assert.ok(read?.breaker?.until !== null && read?.breaker?.until !== undefined);
      assert.ok((read?.breaker?.until as number) > read!.now, "suspended into the future");
      assert.equal(read?.breaker?.backoffs, 1);
      await world.a.stepBreaker(name, success, CLAIM_MS);
      assert.equal(
        (await breakerOf(world.fresh(), name))?.backoffs,
        1,
        "a success while suspended is old news",
      );
    });

    it("a wait the provider asks for suspends at once; once over, the next search claims the probe", async () => {
      const name = fresh();
      assert.deepEqual(await world.a.stepBreaker(name, failure(300), CLAIM_MS), {
        kind: "waiting",
        ms: 300,
      });
      assert.deepEqual(await world.b.stepBreaker(name, { kind: "resume" }, CLAIM_MS), {
        kind: "none",
      }, "not before the wait is over");
      await sleep(350);
      const resumed = await world.b.stepBreaker(name, { kind: "resume" }, CLAIM_MS);
      assert.equal(resumed.kind, "claimed");
      assert.equal(resumed.kind === "claimed" && resumed.confirm, false);
      assert.deepEqual(await world.a.stepBreaker(name, { kind: "resume" }, CLAIM_MS), {
        kind: "none",
      }, "one probe at a time");
      if (resumed.kind !== "claimed") return;
      await world.a.stepBreaker(name, {
        kind: "probed",
        epoch: resumed.epoch,
        probeUntil: resumed.probeUntil,
        verdict: { kind: "success" },
      }, CLAIM_MS);
      assert.equal(await breakerOf(world.fresh(), name), null, "a successful probe forgets it all");
    });

    it("a probe's claim lapses: another may then be claimed", async () => {
      const name = fresh();
      await stepN(world.a, name, failure(), 5);
      await sleep(CLAIM_MS + 100);
      const again = await world.b.stepBreaker(name, failure(), CLAIM_MS);
      assert.equal(again.kind, "claimed");
    });

    it("probe results: stored with a TTL, read while fresh, leased to one asker", async () => {
      const name = fresh();
      assert.equal(await world.a.probeResult("health", name, 10_000), null);
      assert.equal(await world.a.leaseProbe("health", name, 1_000), true);
      if (factory.shared) assert.equal(await world.b.leaseProbe("health", name, 1_000), false);
      await world.a.storeProbeResult("health", name, { status: "ok" }, 300);
      const read = await world.b.probeResult("health", name, 10_000);
      assert.deepEqual(read?.value, { status: "ok" });
      await sleep(350);
      assert.equal(await world.b.probeResult("health", name, 10_000), null, "gone after its TTL");
    });

    searchLogCases(() => world);

    if (!factory.shared) {
      it("shares no flights", async () => {
        assert.equal(await world.a.flight("k"), null);
      });
    } else {
      it("20 concurrent failures from two instances claim exactly one probe", async () => {
        const name = fresh();
        const effects = await Promise.all(
          Array.from(
            { length: 20 },
            (_, i) => (i % 2 === 0 ? world.a : world.b).stepBreaker(name, failure(), CLAIM_MS),
          ),
        );
        assert.equal(effects.filter((e) => e.kind === "claimed").length, 1);
        assert.equal((await breakerOf(world.fresh(), name))?.failures, 20);
      });

      it("a flight: one instance leads, the other follows its events from the first to the last", async () => {
        const identity = fresh();
        const lead = await world.a.flight(identity);
        assert.equal(lead?.kind, "lead");
        if (lead?.kind !== "lead") return;
        // Emitted before anyone follows: kept, and published once a follower registers.
        lead.emit({ n: 1 });
        const follow = await world.b.flight(identity);
        assert.equal(follow?.kind, "follow");
        if (follow?.kind !== "follow") return;
        const seen: FlightEvent[] = [];
        const reading = (async () => {
          for await (const e of follow.events(new AbortController().signal)) seen.push(e);
        })();
        lead.emit({ n: 2 });
        await lead.end({ n: 3, last: true });
        await reading;
        assert.deepEqual(seen, [
          { kind: "event", event: { n: 1 } },
          { kind: "event", event: { n: 2 } },
          { kind: "event", event: { n: 3, last: true } },
        ]);
        const next = await world.b.flight(identity);
        assert.equal(next?.kind, "lead", "nothing is kept once a flight ended: the next one leads");
        if (next?.kind === "lead") await next.end(null);
      });

      it("a flight no one followed ends with nothing to read, and the next search leads", async () => {
        const identity = fresh();
        const lead = await world.a.flight(identity);
        assert.equal(lead?.kind, "lead");
        if (lead?.kind !== "lead") return;
        lead.emit({ n: 1 });
        await lead.end({ n: 2 });
        const next = await world.b.flight(identity);
        assert.equal(next?.kind, "lead");
        if (next?.kind === "lead") await next.end(null);
      });

      it("a leader whose callers all left ends its flight with no result: its followers are orphaned", async () => {
        const identity = fresh();
        const lead = await world.a.flight(identity);
        const follow = await world.b.flight(identity);
        assert.equal(lead?.kind, "lead");
        assert.equal(follow?.kind, "follow");
        if (lead?.kind !== "lead" || follow?.kind !== "follow") return;
        await lead.end(null);
        const seen: FlightEvent[] = [];
        for await (const e of follow.events(new AbortController().signal)) seen.push(e);
        assert.deepEqual(seen, [{ kind: "orphaned" }]);
      });

      it("a leader that dies leaves its followers orphaned within its lease, and one of them leads", async () => {
        const fresh2 = await factory.make();
        try {
          const identity = fresh();
          const lead = await fresh2.a.flight(identity);
          assert.equal(lead?.kind, "lead");
          const follow = await fresh2.b.flight(identity);
          assert.equal(follow?.kind, "follow");
          if (follow?.kind !== "follow") return;
          // The leading instance goes away: it renews no more, and ends nothing.
          await fresh2.a.close();
          const seen: FlightEvent[] = [];
          const started = performance.now();
          for await (const e of follow.events(new AbortController().signal)) seen.push(e);
          assert.deepEqual(seen, [{ kind: "orphaned" }]);
          assert.ok(performance.now() - started < 3_000, "orphaned within the lease and a read");
          const taken = await fresh2.b.flight(identity);
          assert.equal(taken?.kind, "lead");
          if (taken?.kind === "lead") await taken.end(null);
        } finally {
          await fresh2.close();
        }
      });
    }
  });
}
