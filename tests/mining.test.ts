/**
 * Mining beyond the shared sink cases: a webhook batch is a JWS that verifies against the JWKS and
 * that verifyGatewayToken refuses; the answer is handed over before any sink is called; streamed
 * searches; a trace's size cap; the file's rotation; the recorder and sinks as Worker extra modules.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compactVerify, createLocalJWKSet, decodeProtectedHeader } from "jose";
import { createGateway } from "../src/http/mod.ts";
import type { Ports } from "../src/config/mod.ts";
import type { TraceSink } from "../src/protocol/trace-sink.ts";
import { createProviderTokenSigner, verifyGatewayToken } from "../src/auth/mod.ts";
import { MAX_TRACE_BYTES } from "../src/protocol/trace-limits.ts";
import { TRACE_JWS_TYPE } from "../src/protocol/trace-version.ts";
import { openTraceFile } from "../src/runtime/trace-file-sink.ts";
import { bundleWorker } from "../scripts/build-worker.ts";
import { answer, startServer, type TestServer } from "./support/servers.ts";
import { assertEnvelope, manifestOf, settingsFor, validators } from "./support/gateway.ts";
import {
  type Collector,
  eventually,
  type MiningWorld,
  notesGateway,
  startCollector,
  startMiningWorld,
  tracesOfLines,
} from "./support/mining-fixture.ts";

const SECRET = "s".repeat(32);

/** The lines of a file, none while it does not exist yet. */
const linesIn = (path: string) =>
  readFile(path, "utf8").then((text) => text.split("\n").filter((l) => l !== ""), () => []);
const tracesIn = (path: string) => readFile(path, "utf8").then(tracesOfLines, () => []);
const CONFIRMED = { TRACEFETCH_MINING_CONFIRMED: "1", TRACEFETCH_TRACE_SECRET: SECRET };

describe("mining", () => {
  let world: MiningWorld;
  let collector: Collector;
  let provider: TestServer;
  let dir: string;

  before(async () => {
    world = await startMiningWorld();
    collector = await startCollector();
    provider = await startServer(
      answer("notes", "notes", [{ title: "N", locator: "https://n.example/" }]),
    );
    dir = await mkdtemp(join(tmpdir(), "tracefetch-mining-"));
  });
  after(async () => {
    await world?.close();
    await collector?.close();
    await provider?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const gatewayWith = (env: Record<string, string>, config: Ports = {}) =>
    notesGateway(provider.url, env, config);

  it("a webhook batch is a JWS that verifies against the gateway's JWKS, and verifyGatewayToken refuses it", async () => {
    const app = createGateway(
      settingsFor(world.manifest, {
        ...world.env,
        ...CONFIRMED,
        TRACEFETCH_TRACE_WEBHOOK: collector.url,
      }),
    );
    const res = await app.request("/v1/search?q=deadline");
    assert.equal(res.status, 200);
    await eventually("a batch", () => Promise.resolve(collector.taken.length), (n) => n >= 1);
    const body = collector.taken[0] as string;
    assert.equal(collector.requests.at(-1)?.headers["content-type"], "application/jose");
    const jwks = await (await app.request("/.well-known/jwks.json")).json();
    const { protectedHeader, payload } = await compactVerify(body, createLocalJWKSet(jwks), {
      algorithms: ["EdDSA"],
    });
    assert.deepEqual(protectedHeader, { alg: "EdDSA", typ: TRACE_JWS_TYPE, kid: "mining-test" });
    // The batch is what the published schema (/schemas/trace-batch.json) describes.
    const batch = JSON.parse(new TextDecoder().decode(payload)) as { traces: unknown[] };
    assert.ok(validators.traceBatch(batch), JSON.stringify(validators.traceBatch.errors));
    assert.equal(batch.traces.length, 1);
    const verify = verifyGatewayToken({ jwks, issuer: "http://localhost", audience: "vault" });
    const refused = await verify(
      new Request("http://p/", { headers: { authorization: `Bearer ${body}` } }),
    );
    assert.equal(refused?.status, 401);
    assert.match(
      JSON.stringify(await refused?.json()),
      /a signed search trace is not a gateway token/,
    );
  });

  it("verifyGatewayToken refuses a trace-typed JWS even when it carries every claim a token needs", async () => {
    const signer = createProviderTokenSigner(world.env.TRACEFETCH_SIGNING_JWK as string);
    const now = Math.floor(Date.now() / 1000);
    const claims = {
      iss: "https://gw.example",
      aud: "vault",
      sub: "x",
      iat: now,
      exp: now + 60,
      jti: "j",
    };
    const payload = new TextEncoder().encode(JSON.stringify(claims));
    const verify = verifyGatewayToken({
      jwks: signer.publicJwks,
      issuer: "https://gw.example",
      audience: "vault",
    });
    const asked = (token: string) =>
      verify(new Request("http://p/", { headers: { authorization: `Bearer ${token}` } }));
    const trace = await signer.signDocument(payload, TRACE_JWS_TYPE);
    assert.equal(decodeProtectedHeader(trace).typ, TRACE_JWS_TYPE);
    assert.equal((await asked(trace))?.status, 401);
    const untyped = await signer.signDocument(payload, "example+jws");
    assert.equal((await asked(untyped))?.status, 401, "only typ JWT passes");
    const token = await signer.mint({
      issuer: "https://gw.example",
      audience: "vault",
      subject: "x",
      scope: "tracefetch:vault",
      budgetMs: 1000,
    });
    assert.equal(await asked(token), null, "a real provider token still passes");
  });

  it("the sink is called only after the answer was handed over", async () => {
    let answered = false;
    const seen: boolean[] = [];
    const sink: TraceSink = {
      kind: "file",
      write: (entries) => {
        for (const _ of entries) seen.push(answered);
        return Promise.resolve();
      },
    };
    const app = gatewayWith({ ...CONFIRMED, TRACEFETCH_TRACE_FILE: "unused" }, { traceSink: sink });
    for (let i = 0; i < 5; i++) {
      answered = false;
      const res = await app.request(`/v1/search?q=order${i}`);
      answered = true;
      assert.equal(assertEnvelope(await res.json()).mining.recorded, true);
      await eventually("the trace", () => Promise.resolve(seen.length), (n) => n === i + 1);
    }
    assert.deepEqual(seen, [true, true, true, true, true]);
  });

  it("a streamed search is recorded too, and its done event carries the mining block", async () => {
    const path = join(dir, "streamed.jsonl");
    const app = gatewayWith(
      { ...CONFIRMED, TRACEFETCH_TRACE_FILE: path },
      { traceSink: await openTraceFile(path, 1_000_000) },
    );
    const res = await app.request("/v1/search?q=streamed&stream=ndjson");
    const events = (await res.text()).trim().split("\n").map((l) => JSON.parse(l));
    const done = events.at(-1);
    assert.equal(done.event, "done");
    assert.deepEqual(done.mining, {
      state: "enabled",
      configured: true,
      recorded: true,
      health: [],
    });
    const traces = await eventually("the trace", () => tracesIn(path), (t) => t.length === 1);
    assert.equal(traces[0]?.request_id, done.request_id);
  });

  it("without a sink every answer says disabled, and /v1/status says so with its counters", async () => {
    const app = gatewayWith({});
    const body = assertEnvelope(await (await app.request("/v1/search?q=x")).json());
    assert.deepEqual(body.mining, {
      state: "disabled",
      configured: false,
      recorded: false,
      health: [],
    });
    const status = assertEnvelope(await (await app.request("/v1/status")).json());
    assert.deepEqual(status.result.mining, {
      state: "disabled",
      configured: false,
      sink: null,
      health: [],
      queued: 0,
      dropped: 0,
      written: 0,
    });
  });

  it("a trace over its cap loses merged entries from the end and says so", async () => {
    const long = (i: number) => `https://long.example/${i}/${"x".repeat(1900)}`;
    const big = await startServer(answer(
      "big",
      "big",
      Array.from({ length: 100 }, (_, i) => ({ title: `t${i}`, locator: long(i) })),
    ));
    try {
      const path = join(dir, "capped.jsonl");
      const app = createGateway(
        settingsFor(manifestOf([{ name: "big", endpoint: big.url }]), {
          ...CONFIRMED,
          TRACEFETCH_TRACE_FILE: path,
        }, { allowLoopback: true, describeProviders: false }),
        { traceSink: await openTraceFile(path, 10_000_000) },
      );
      await app.request("/v1/search?q=big&limit=100");
      const [line] = await eventually(
        "the trace",
        () => linesIn(path),
        (lines) => lines.length === 1,
      );
      assert.ok(new TextEncoder().encode(line).byteLength <= MAX_TRACE_BYTES);
      const [trace] = tracesOfLines(`${line}\n`);
      assert.equal(trace?.truncated, true);
      assert.ok((trace?.merged.length ?? 0) > 10 && (trace?.merged.length ?? 0) < 100);
      assert.deepEqual(trace?.merged.map((m) => m.rank), trace?.merged.map((_, i) => i + 1));
    } finally {
      await big.close();
    }
  });

  it("the file is rotated before it passes its size, keeping three earlier files", async () => {
    const folder = await mkdtemp(join(dir, "rotate-"));
    const path = join(folder, "traces.jsonl");
    const app = gatewayWith(
      {
        ...CONFIRMED,
        TRACEFETCH_TRACE_RAW_QUERIES: "1",
        TRACEFETCH_TRACE_FILE: path,
        TRACEFETCH_TRACE_FILE_MAX_BYTES: "3000",
      },
      { traceSink: await openTraceFile(path, 3000) },
    );
    const written = () => readdirSync(folder).map((f) => readFileSync(join(folder, f), "utf8"));
    for (let i = 0; i < 40; i++) {
      await app.request(`/v1/search?q=rotate${i}`);
      // One at a time, so each write is a batch of one and every file ends under the cap.
      await eventually(
        "the trace",
        () => Promise.resolve(written().join("")),
        (all) => all.includes(`"rotate${i}"`),
      );
    }
    const files = readdirSync(folder).sort();
    assert.deepEqual(files, ["traces.jsonl", "traces.jsonl.1", "traces.jsonl.2", "traces.jsonl.3"]);
    for (const file of files) {
      const text = readFileSync(join(folder, file), "utf8");
      assert.ok(new TextEncoder().encode(text).byteLength <= 3000, file);
      assert.ok(tracesOfLines(text).length > 0, file);
    }
  });

  it("the Worker ships the recorder and the sinks as extra modules, never in the main module", async () => {
    const modules = await bundleWorker({ withCorpus: false });
    const atStart = modules.filter((m) => m.loaded === "start").flatMap((m) => m.inputs);
    const onDemand = modules.filter((m) => m.loaded === "on_demand").flatMap((m) => m.inputs);
    for (
      const file of [
        ...["recorder", "build-trace", "queue-sink"]
          .map((name) => `src/gateway/mining/${name}.ts`),
        "src/core/trace-hmac.ts",
        "src/transport/webhook-sink.ts",
      ]
    ) {
      assert.ok(!atStart.includes(file), `${file} is in the main module`);
      assert.ok(onDemand.includes(file), `${file} is in no extra module`);
    }
  });
});
