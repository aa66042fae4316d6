/**
 * `tracefetch replay` through the real bin: Cranfield searches recorded by a gateway with a JSONL
 * sink, replayed against the same manifest, give `npm run eval`'s figures for it (the eval's own
 * harness computes them beside), and removing a provider is a regression against that baseline.
 * Then the traces replay cannot run (hashed queries), the lines it reads, and hashed locators
 * matched with the trace secret; searches `npm start` recorded, replayed with `--default`; and a
 * provider that succeeded then and is down now, which fails the replay.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { exportJWK, generateKeyPair } from "jose";
import { createGateway } from "../src/http/mod.ts";
import { createProviderTokenSigner } from "../src/auth/mod.ts";
import { nodePorts } from "../src/runtime/node-fetch.ts";
import { openTraceFile } from "../src/runtime/trace-file-sink.ts";
import { TRACE_JWS_TYPE } from "../src/protocol/trace-version.ts";
import { evaluate, METRIC_NAMES, relevantCount } from "../src/cli/replay/metrics.ts";
import { launch, type Launched } from "../src/runtime/launch.ts";
import { listen } from "../src/runtime/node-listen.ts";
import { readSettings } from "../src/config/settings.ts";
import { answer, startServer, type TestServer } from "./support/servers.ts";
import { type Collection, loadCollection, type Query } from "../bench/eval/collection.ts";
import { runSearches } from "../bench/eval/run-searches.ts";
import { builtinSetups, serveCollection, type Served, type Setup } from "../bench/eval/setups.ts";
import { runCli, runJson } from "./support/cli.ts";
import {
  eventually,
  type MiningWorld,
  SECRETS,
  startMiningWorld,
} from "./support/mining-fixture.ts";
import { settingsFor } from "./support/gateway.ts";

const root = fileURLToPath(new URL("../", import.meta.url));
const CRANFIELD = join(root, "bench/eval/cranfield");
/** Enough judged queries for stable means, few enough to stay quick. */
const QUERIES = 25;
const LIMIT = 10;
const RECORDING = {
  TRACEFETCH_MINING_CONFIRMED: "1",
  TRACEFETCH_TRACE_SECRET: "r".repeat(32),
};
const lines = (path: string) =>
  readFile(path, "utf8").then((text) => text.split("\n").filter((l) => l !== ""), () => []);

// The eval harness is a Node script (bench/eval), as in tests/eval-smoke.test.ts.
describe("replay over recorded Cranfield searches", { skip: "Deno" in globalThis }, () => {
  let dir: string;
  let collection: Collection;
  let queries: Query[];
  let served: Served;
  let methods: Setup;
  let traces: string;

  /** Records `queries` through a gateway over `setup` with a JSONL sink; the file's path. */
  async function record(setup: Setup, asked: Query[], env: Record<string, string>, name: string) {
    const path = join(dir, name);
    const app = createGateway(
      settingsFor({ schema_version: "tracefetch.providers.v1", providers: setup.providers }, {
        ...RECORDING,
        ...env,
        TRACEFETCH_TRACE_FILE: path,
      }, { allowLoopback: true, describeProviders: false }),
      { ...nodePorts(), traceSink: await openTraceFile(path, 64 * 1_048_576) },
    );
    for (const query of asked) {
      // The query's id as the request id, as `npm run eval` sends it: the judgments match on it.
      const res = await app.request("/v1/search", {
        method: "POST",
        headers: { "content-type": "application/json", "x-request-id": query.id },
        body: JSON.stringify({ query: query.text, limit: LIMIT }),
      });
      assert.equal(res.status, 200);
    }
    await eventually("every trace", () => lines(path), (l) => l.length === asked.length);
    return path;
  }

  const manifestFile = async (name: string, providers: Setup["providers"]) => {
    const path = join(dir, name);
    await writeFile(path, JSON.stringify({ schema_version: "tracefetch.providers.v1", providers }));
    return path;
  };
  const LOOPBACK = { env: { TRACEFETCH_ALLOW_LOOPBACK: "1" } };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "tracefetch-replay-"));
    collection = await loadCollection(CRANFIELD);
    queries = collection.queries
      .filter((q) => relevantCount(collection.qrels.get(q.id) ?? new Map()) > 0)
      .slice(0, QUERIES);
    served = await serveCollection(collection, 1);
    methods = builtinSetups(served, 1, null).find((s) => s.name === "methods") as Setup;
    traces = await record(methods, queries, { TRACEFETCH_TRACE_RAW_QUERIES: "1" }, "t.jsonl");
  });
  after(async () => {
    await served?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("reproduces npm run eval's figures for the same manifest, and reports no change", async () => {
    // What `npm run eval` computes for this setup and these queries (bench/eval/eval.ts).
    const run = await runSearches(methods, queries, LIMIT);
    const ranked = new Map([...run.searches].map(([id, s]) => [id, s.merged]));
    const eval_ = evaluate(ranked, collection.qrels, { only: run.searches.keys() });
    const manifest = await manifestFile("methods.json", methods.providers);
    const replay = await runJson([
      "replay",
      traces,
      "--manifest",
      manifest,
      "--qrels",
      join(CRANFIELD, "qrels.tsv"),
    ], LOOPBACK);
    const { envelope } = replay;
    assert.equal(envelope.code, "ok", JSON.stringify(envelope.error));
    assert.equal(envelope.command, "replay");
    const result = envelope.result;
    assert.deepEqual([result.read, result.replayed], [QUERIES, QUERIES]);
    assert.deepEqual(result.skipped, { query_hashed: 0, unreadable: 0 });
    assert.deepEqual([result.overall.overlap_at_10, result.overall.rbo], [1, 1]);
    assert.deepEqual(result.overall.providers_now_failing, []);
    assert.equal(result.metrics.queries, eval_.queries);
    for (const name of METRIC_NAMES) {
      for (const side of ["recorded", "replayed"]) {
        const got = result.metrics[side][name];
        assert.ok(
          Math.abs(got - eval_.mean[name]) < 1e-12,
          `${side} ${name}: ${got} vs ${eval_.mean[name]}`,
        );
      }
    }
    assert.ok(eval_.mean.ndcg_10 > 0.2, "the ranking finds relevant documents");
    await writeFile(join(dir, "baseline.json"), replay.stdout);
  });

  it("reports a regression, exit 2, when a provider is removed from the manifest", async () => {
    const baseline = join(dir, "baseline.json");
    assert.ok((await lines(baseline)).length === 1, "the test above wrote the baseline");
    const without = await manifestFile(
      "without-bm25.json",
      methods.providers.filter((p) => p.name !== "bm25"),
    );
    const args = ["replay", traces, "--manifest", without, "--qrels", join(CRANFIELD, "qrels.tsv")];
    const { envelope } = await runJson([...args, "--baseline", baseline], LOOPBACK);
    assert.equal(envelope.exit_code, 2);
    assert.equal(envelope.code, "invalid_field");
    assert.equal(envelope.error.field, "manifest");
    assert.match(
      envelope.error.message,
      /^regression against .*baseline\.json: overlap_at_10 1\.0000 -> /,
    );
    const figures = envelope.result.baseline.drops.map((d: { figure: string }) => d.figure);
    assert.ok(figures.includes("overlap_at_10") && figures.includes("rbo"), figures.join());
    assert.deepEqual(envelope.result.overall.providers_now_failing, [
      { provider: "bm25", searches: QUERIES },
    ]);
    assert.deepEqual(envelope.result.queries[0].now_failing, [
      { provider: "bm25", outcome: "not_contacted", code: "not_in_manifest" },
    ]);
    const human = await runCli([...args, "--baseline", baseline], LOOPBACK);
    assert.equal(human.code, 2);
    assert.match(human.stdout, /providers that now fail: bm25 \(25\)/);
    assert.match(human.stdout, /figures fell by more than 0\.02 since/);
    assert.match(human.stderr, /\(invalid_field; next: fix_input\)/);
  });

  it("traces that kept only their query's HMAC are counted as skipped; none left is exit 2", async () => {
    const hashed = await record(methods, queries.slice(0, 3), {}, "hashed.jsonl");
    const manifest = await manifestFile("methods.json", methods.providers);
    const { envelope } = await runJson(["replay", hashed, "--manifest", manifest], LOOPBACK);
    assert.equal(envelope.code, "invalid_field");
    assert.equal(envelope.error.field, "traces");
    assert.match(envelope.error.message, /TRACEFETCH_TRACE_RAW_QUERIES=1/);
    assert.deepEqual([envelope.result.read, envelope.result.replayed], [3, 0]);
    assert.deepEqual(envelope.result.skipped, { query_hashed: 3, unreadable: 0 });
  });

  it("reads a trace a line, a batch a line and a webhook's JWS a line, and counts the rest", async () => {
    const [first, second] = await lines(traces);
    const { privateKey } = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
    const signer = createProviderTokenSigner(JSON.stringify(await exportJWK(privateKey)));
    const batch = `{"schema_version":"tracefetch.trace-batch.v1","traces":[${second}]}`;
    const jws = await signer.signDocument(new TextEncoder().encode(batch), TRACE_JWS_TYPE);
    const mixed = join(dir, "mixed.jsonl");
    await writeFile(mixed, [first, batch, jws, "not a trace", "{}", ""].join("\n"));
    const manifest = await manifestFile("methods.json", methods.providers);
    const { envelope } = await runJson(["replay", mixed, "--manifest", manifest], LOOPBACK);
    assert.equal(envelope.code, "ok");
    assert.deepEqual([envelope.result.read, envelope.result.replayed], [3, 3]);
    assert.deepEqual(envelope.result.skipped, { query_hashed: 0, unreadable: 2 });
    const ids = envelope.result.queries.map((q: { request_id: string }) => q.request_id);
    assert.deepEqual(ids, [queries[0]?.id, queries[1]?.id, queries[1]?.id]);
  });

  it("refuses what it cannot use, naming the option", async () => {
    const manifest = await manifestFile("methods.json", methods.providers);
    const cases: Array<[string[], string, string]> = [
      [["replay", traces], "manifest", "invalid_field"],
      [["replay", "--manifest", manifest], "traces", "invalid_field"],
      [["replay", join(dir, "none.jsonl"), "--manifest", manifest], "traces", "not_found"],
      [["replay", traces, "--manifest", manifest, "--qrels", manifest], "qrels", "invalid_field"],
      [
        ["replay", traces, "--manifest", manifest, "--baseline", manifest],
        "baseline",
        "invalid_field",
      ],
    ];
    for (const [args, field, code] of cases) {
      const { envelope } = await runJson(args, LOOPBACK);
      assert.deepEqual([envelope.code, envelope.error.field], [code, field], args.join(" "));
    }
  });
});

describe("replay matches hashed locators with the trace secret", () => {
  let world: MiningWorld;
  let dir: string;
  before(async () => {
    world = await startMiningWorld();
    dir = await mkdtemp(join(tmpdir(), "tracefetch-replay-"));
  });
  after(async () => {
    await world?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("with TRACEFETCH_TRACE_SECRET the replayed lists equal the recorded ones; without it they cannot", async () => {
    const path = join(dir, "t.jsonl");
    const app = createGateway(
      settingsFor(world.manifest, {
        ...world.env,
        ...RECORDING,
        TRACEFETCH_TRACE_SECRET: SECRETS.traceSecret,
        TRACEFETCH_TRACE_RAW_QUERIES: "1",
        TRACEFETCH_TRACE_FILE: path,
      }),
      { traceSink: await openTraceFile(path, 1_000_000) },
    );
    for (let i = 0; i < 3; i++) {
      await app.request(`/v1/search?q=replay${i}`, {
        headers: { authorization: `Bearer ${world.callerToken}` },
      });
    }
    await eventually("3 traces", () => lines(path), (l) => l.length === 3);
    assert.match((await lines(path)).join(), /"locator_hmac"/);
    const manifest = join(dir, "m.json");
    await writeFile(manifest, JSON.stringify(world.manifest));
    const args = ["replay", path, "--manifest", manifest, "--allow-sensitive"];
    const matched = await runJson(args, { env: world.env });
    assert.equal(matched.envelope.code, "ok");
    assert.deepEqual(
      [matched.envelope.result.overall.overlap_at_10, matched.envelope.result.overall.rbo],
      [1, 1],
    );
    const { TRACEFETCH_TRACE_SECRET: _, ...withoutSecret } = world.env;
    const unmatched = await runJson(args, { env: withoutSecret });
    assert.ok(unmatched.envelope.result.overall.overlap_at_10 < 1);
    for (const q of unmatched.envelope.result.queries) assert.deepEqual(q.now_failing, []);
  });
});

describe("replay --default: searches npm start recorded, against the embedded default", {
  skip: "Deno" in globalThis ? "the CLI is a Node program" : false,
}, () => {
  let dir: string;
  let traces: string;
  const asked = [
    "q=deadline",
    "q=retry%20after&limit=3",
    "q=cancellation&scope=specs",
    "q=fusion&providers=engineering,reference",
    "q=token%20bucket&limit=20",
    "q=server-sent%20events",
  ];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "tracefetch-replay-default-"));
    traces = join(dir, "traces.jsonl");
    // As docs/cli.md's recipe starts it: npm start with a trace file, raw queries, confirmed.
    const gateway: Launched = await launch(
      readSettings({
        PORT: "0",
        HOST: "127.0.0.1",
        TRACEFETCH_TRACE_FILE: traces,
        TRACEFETCH_TRACE_RAW_QUERIES: "1",
        TRACEFETCH_MINING_CONFIRMED: "1",
      }),
      listen,
      nodePorts(),
    );
    try {
      for (const query of asked) {
        const res = await fetch(`${gateway.url}/v1/search?${query}`);
        assert.equal(res.status, 200, query);
        await res.body?.cancel();
      }
      await eventually("every trace", () => lines(traces), (l) => l.length === asked.length);
    } finally {
      await gateway.close();
    }
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("replays at overlap@10 1.0 and RBO 1.0, every provider as it was, the manifest never written", async () => {
    const { envelope } = await runJson(["replay", traces, "--default"]);
    assert.equal(envelope.code, "ok", JSON.stringify(envelope.error));
    const { result } = envelope;
    assert.equal(result.manifest, "the embedded default");
    assert.deepEqual([result.read, result.replayed], [asked.length, asked.length]);
    assert.deepEqual([result.overall.overlap_at_10, result.overall.rbo], [1, 1]);
    assert.deepEqual(result.overall.providers_now_failing, []);
    for (const line of await lines(traces)) {
      assert.doesNotMatch(line, /schema_version":"tracefetch\.providers|"endpoint"/);
    }
    const human = await runCli(["replay", traces, "--default"]);
    assert.equal(human.code, 0, human.stderr);
    assert.match(
      human.stdout,
      /^replayed 6 of 6 traces against the embedded default: overlap@10 1\.0000, RBO 1\.0000\n/,
    );
  });

  it("--default and --manifest together are refused, naming --manifest", async () => {
    const { envelope } = await runJson(["replay", traces, "--default", "--manifest", traces]);
    assert.deepEqual([envelope.code, envelope.error.field], ["invalid_field", "manifest"]);
  });
});

describe("replay when a provider that succeeded then is down now", {
  skip: "Deno" in globalThis ? "the CLI is a Node program" : false,
}, () => {
  let dir: string;
  let notes: TestServer;
  let specs: TestServer;
  let traces: string;
  let manifest: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "tracefetch-replay-down-"));
    notes = await startServer(
      answer("notes", "notes", [{ title: "N", locator: "https://n.example/1" }]),
    );
    specs = await startServer(
      answer("specs", "specs", [{ title: "S", locator: "https://s.example/1" }]),
    );
    const providers = [
      { name: "notes", scope: "notes", endpoint: notes.url },
      { name: "specs", scope: "specs", endpoint: specs.url },
    ];
    traces = join(dir, "t.jsonl");
    manifest = join(dir, "m.json");
    await writeFile(
      manifest,
      JSON.stringify({ schema_version: "tracefetch.providers.v1", providers }),
    );
    const app = createGateway(
      settingsFor({ schema_version: "tracefetch.providers.v1", providers }, {
        TRACEFETCH_MINING_CONFIRMED: "1",
        TRACEFETCH_TRACE_RAW_QUERIES: "1",
        TRACEFETCH_TRACE_FILE: traces,
      }, { allowLoopback: true, describeProviders: false }),
      { ...nodePorts(), traceSink: await openTraceFile(traces, 1_000_000) },
    );
    for (const q of ["one", "two", "three"]) {
      const res = await app.request(`/v1/search?q=${q}`);
      assert.equal(res.status, 200);
    }
    await eventually("3 traces", () => lines(traces), (l) => l.length === 3);
    await notes.close();
  });
  after(async () => {
    await specs?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("exits 2, invalid_field, naming the provider and its code; --allow-failing compares anyway", async () => {
    const args = ["replay", traces, "--manifest", manifest];
    const { envelope } = await runJson(args, LOOPBACK_ENV);
    assert.deepEqual([envelope.exit_code, envelope.code, envelope.error.field], [
      2,
      "invalid_field",
      "manifest",
    ]);
    assert.match(
      envelope.error.message,
      /^provider notes succeeded when recorded and now fails in 3 of 3 replayed searches \(connection_refused\): /,
    );
    assert.match(envelope.error.message, /--allow-failing/);
    assert.deepEqual(envelope.result.overall.providers_now_failing, [{
      provider: "notes",
      searches: 3,
    }]);
    const allowed = await runJson([...args, "--allow-failing"], LOOPBACK_ENV);
    assert.equal(allowed.envelope.code, "ok");
    assert.equal(allowed.envelope.exit_code, 0);
  });
});

const LOOPBACK_ENV = { env: { TRACEFETCH_ALLOW_LOOPBACK: "1" } };
