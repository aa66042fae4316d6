/**
 * The sink tests every runtime runs (docs/envelope.md, "Mining"): one case list, driven through
 * the JSONL file and the webhook on Node and Deno, and the Queue and the webhook in workerd.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Trace } from "../../src/protocol/trace-schema.ts";
import {
  answerOf,
  eventually,
  type MiningWorld,
  PRIVATE_LOCATOR,
  SECRETS,
  SHARED_LOCATOR,
  startMiningWorld,
} from "./mining-fixture.ts";
import { assertEnvelope } from "./gateway.ts";

/** A gateway with a sink, as one runtime runs it. */
export type SinkGateway = {
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /** Every trace the sink holds so far, in the order it took them. */
  traces(): Promise<Trace[]>;
  /** Makes the sink fail (`fail`) or never answer (`hang`); absent when a test cannot. */
  breakSink?: (mode: "fail" | "hang") => void;
  healSink?: () => void;
  close(): Promise<void>;
};

export type SinkHarness = {
  /** The runtime and sink, for test names: "Node, JSONL file". */
  name: string;
  /** Starts a gateway over the world's providers with its variables, this sink's, and `env`. */
  start(world: MiningWorld, env: Record<string, string>): Promise<SinkGateway>;
  /** Whether the sink can be made to fail (`fail`) and to hang (`hang`). */
  breaks: ReadonlyArray<"fail" | "hang">;
};

const SEARCHES = 1_000;
/** Searches in flight at once: a steady load, well under the in-flight limit. */
const CONCURRENCY = 8;

// deno-lint-ignore no-explicit-any
type Answer = { status: number; body: any };

async function ask(gateway: SinkGateway, query: string, token: string | null): Promise<Answer> {
  const res = await gateway.fetch(`/v1/search?q=${encodeURIComponent(query)}`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  return { status: res.status, body: assertEnvelope(await res.json()) };
}

// deno-lint-ignore no-explicit-any
async function status(gateway: SinkGateway): Promise<any> {
  const res = await gateway.fetch("/v1/status");
  return assertEnvelope(await res.json()).result.mining;
}

/** Runs `count` searches, CONCURRENCY at a time; half as the token's caller, half anonymous. */
async function searchMany(
  gateway: SinkGateway,
  world: MiningWorld,
  count: number,
  query: (i: number) => string,
): Promise<Answer[]> {
  const answers: Answer[] = new Array(count);
  let next = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < count) {
      const i = next++;
      answers[i] = await ask(gateway, query(i), i % 2 === 0 ? world.callerToken : null);
    }
  }));
  return answers;
}

/** The secrets no trace may hold, with the tokens the gateway minted for the non-public provider. */
function forbidden(world: MiningWorld, optedIn: boolean): string[] {
  const always = [
    world.callerToken,
    SECRETS.authSecret,
    SECRETS.traceSecret,
    SECRETS.bearer,
    SECRETS.sub,
    SECRETS.snippet,
    SECRETS.title,
    SECRETS.errorText,
    ...world.mintedTokens(),
  ];
  return optedIn ? always : [...always, SECRETS.query, SECRETS.privateLocator];
}

export function sinkCases(harness: SinkHarness): void {
  describe(`mining through ${harness.name}`, () => {
    let world: MiningWorld;
    before(async () => {
      world = await startMiningWorld();
    });
    after(async () => {
      await world?.close();
    });
    const confirmed = { TRACEFETCH_MINING_CONFIRMED: "1" };

    it(`${harness.name}: ${SEARCHES} searches make ${SEARCHES} traces, and none holds a token, a snippet, a raw query or a raw sub`, async () => {
      const gateway = await harness.start(world, confirmed);
      try {
        const answers = await searchMany(
          gateway,
          world,
          SEARCHES,
          (i) => `${SECRETS.query}-${i} deadline`,
        );
        for (const { status, body } of answers) {
          assert.equal(status, 200);
          assert.equal(body.code, "partial", "flaky fails, the others answer");
          assert.deepEqual(body.mining, {
            state: "enabled",
            configured: true,
            recorded: true,
            health: [],
          });
        }
        const traces = await eventually(
          "every search's trace reached the sink",
          () => gateway.traces(),
          (t) => t.length >= SEARCHES,
        );
        assert.equal(traces.length, SEARCHES);
        const ids = new Set(answers.map((a) => a.body.request_id));
        assert.deepEqual(new Set(traces.map((t) => t.request_id)), ids);
        const text = traces.map((t) => JSON.stringify(t));
        for (const secret of forbidden(world, false)) {
          const hit = text.findIndex((t) => t.includes(secret));
          assert.equal(hit, -1, `a trace holds ${secret.slice(0, 24)}...: ${text[hit]}`);
        }
        for (const trace of traces) {
          assert.equal(trace.query.text, undefined);
          assert.match(trace.query.hmac ?? "", /^[A-Za-z0-9_-]{43}$/);
          const token = trace.caller.authenticated;
          assert.equal(trace.caller.sub_hmac !== undefined, token);
          const byName = new Map(trace.attempts.map((a) => [a.provider, a]));
          assert.equal(byName.get("flaky")?.outcome, "search_failed");
          assert.equal(byName.has("vault"), token, "only a token's caller reaches vault");
          assert.ok(trace.merged.some((m) => m.locator === SHARED_LOCATOR));
          if (token) assert.equal(trace.merged.filter((m) => m.locator_hmac).length, 1);
        }
        const mining = await status(gateway);
        assert.equal(mining.written, SEARCHES);
        assert.equal(mining.dropped, 0);
      } finally {
        await gateway.close();
      }
    });

    it(`${harness.name}: opted in, a trace keeps the query and the non-public locator, and still no token, snippet or sub`, async () => {
      const gateway = await harness.start(world, {
        ...confirmed,
        TRACEFETCH_TRACE_RAW_QUERIES: "1",
        TRACEFETCH_TRACE_RAW_LOCATORS: "1",
      });
      try {
        await searchMany(gateway, world, 20, (i) => `${SECRETS.query}-raw-${i}`);
        const traces = await eventually("20 traces", () => gateway.traces(), (t) => t.length >= 20);
        const text = traces.map((t) => JSON.stringify(t));
        for (const secret of forbidden(world, true)) {
          assert.equal(text.findIndex((t) => t.includes(secret)), -1, secret.slice(0, 24));
        }
        assert.ok(traces.every((t) => t.query.text?.startsWith(`${SECRETS.query}-raw-`)));
        assert.ok(traces.some((t) => t.merged.some((m) => m.locator === PRIVATE_LOCATOR)));
      } finally {
        await gateway.close();
      }
    });

    it(`${harness.name}: not confirmed, nothing is recorded and every answer says undecided`, async () => {
      const gateway = await harness.start(world, {});
      try {
        const answers = await searchMany(gateway, world, 10, (i) => `undecided ${i}`);
        for (const { body } of answers) {
          assert.equal(body.mining.state, "undecided");
          assert.equal(body.mining.recorded, false);
          assert.match(body.mining.health[0], /TRACEFETCH_MINING_CONFIRMED=1/);
        }
        const mining = await status(gateway);
        assert.equal(mining.state, "undecided");
        await new Promise((r) => setTimeout(r, 300));
        assert.deepEqual(await gateway.traces(), []);
      } finally {
        await gateway.close();
      }
    });

    for (const mode of harness.breaks) {
      it(
        `${harness.name}: a sink that ${
          mode === "fail" ? "fails" : "never answers"
        } changes no answer; the state goes degraded, drops are counted, and it comes back`,
        async () => {
          const gateway = await harness.start(world, {
            ...confirmed,
            TRACEFETCH_TRACE_BACKLOG: "5",
            TRACEFETCH_TRACE_WEBHOOK_TIMEOUT_MS: "300",
          });
          const breakSink = gateway.breakSink as (mode: "fail" | "hang") => void;
          try {
            const reference = await ask(gateway, "deadline", world.callerToken);
            assert.equal(reference.body.mining.state, "enabled");
            await eventually("the first trace", () => gateway.traces(), (t) => t.length === 1);
            breakSink(mode);
            // One after another, so none joins another's fan-out: each is the reference's twin.
            for (let i = 0; i < 30; i++) {
              const broken = await ask(gateway, "deadline", world.callerToken);
              assert.deepEqual(
                answerOf(broken.status, broken.body),
                answerOf(reference.status, reference.body),
              );
            }
            const degraded = await eventually(
              "the state goes degraded",
              () => status(gateway),
              (m) => m.state === "degraded",
            );
            assert.match(
              degraded.health.join("; "),
              mode === "fail"
                ? /sink failed: webhook answered 503|sink failed: cannot append to the trace file/
                : /sink failed: webhook did not answer within 300 ms/,
            );
            assert.ok(degraded.dropped > 0, "the backlog of 5 overflowed");
            assert.match(degraded.health.join("; "), /\d+ traces? dropped: queue full/);
            const answer = await ask(gateway, "deadline", world.callerToken);
            assert.equal(answer.body.mining.state, "degraded");
            assert.deepEqual(answerOf(answer.status, answer.body), answerOf(200, reference.body));
            gateway.healSink?.();
            const healed = await eventually(
              "a search after the sink recovers says enabled",
              async () => (await ask(gateway, "deadline", null)).body.mining,
              (m) => m.state === "enabled",
            );
            assert.equal(healed.recorded, true);
            assert.ok(!healed.health.some((line: string) => line.startsWith("sink failed")));
            const recovered = await status(gateway);
            assert.equal(recovered.state, "enabled");
            assert.ok(recovered.written > 1);
          } finally {
            await gateway.close();
          }
        },
      );
    }
  });
}
