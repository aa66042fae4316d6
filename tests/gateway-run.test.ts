/**
 * One search run for every caller: the HTTP routes and the CLI's in-process search go through the
 * same admission and run, and the in-flight count has one owner that never drifts.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Slots } from "../src/gateway/mod.ts";
import { launch } from "../src/runtime/launch.ts";
import { listen } from "../src/runtime/node-listen.ts";
import { assertEnvelope, gateway, manifestOf } from "./support/gateway.ts";
import { answer, type Handler, startServer, type TestServer } from "./support/servers.ts";
import { runJson } from "./support/cli.ts";
import { collect } from "./support/streams.ts";
import { readSettings } from "../src/config/settings.ts";

describe("the in-flight count", () => {
  it("a place given back twice is counted once", () => {
    const slots = new Slots(2);
    const first = slots.tryTake();
    const second = slots.tryTake();
    assert.ok(first && second);
    assert.equal(slots.tryTake(), null);
    first();
    first();
    assert.equal(slots.taken, 1);
    assert.ok(slots.tryTake(), "one place is free again, and only one");
    assert.equal(slots.tryTake(), null);
  });

  it("a streamed search holds its slot until its last event is written; refusals never take one", async () => {
    let release = () => {};
    const waiting = new Promise<void>((resolve) => (release = resolve));
    const reply = answer("slow", "slow", [{ title: "Slow", locator: "https://slow.example/" }]);
    const provider = await startServer(async (req, res, body) => {
      await waiting;
      await reply(req, res, body);
    });
    try {
      const app = gateway([{ name: "slow", endpoint: provider.url }], {
        settings: { maxInflight: 1 },
      });
      const inFlight = async () =>
        assertEnvelope(await (await app.request("/v1/status")).json()).result.searches_in_flight;
      const streamed = await app.request("/v1/search?q=x&stream=ndjson");
      assert.equal(streamed.status, 200);
      for (let i = 0; i < 200 && provider.requests.length === 0; i++) {
        await new Promise((r) => setTimeout(r, 5));
      }
      assert.equal(await inFlight(), 1);
      const refused = await app.request("/v1/search?q=x&providers=nobody");
      assert.equal(assertEnvelope(await refused.json()).code, "unknown_provider");
      // A different search: an identical one would join the search in flight without a slot.
      const shed = await app.request("/v1/search?q=other");
      assert.equal(assertEnvelope(await shed.json()).code, "overloaded");
      release();
      const events = await collect(streamed.body!, "ndjson");
      assert.equal(events.at(-1)?.event.event, "done");
      assert.equal(await inFlight(), 0);
      const next = await app.request("/v1/search?q=x");
      assert.equal(assertEnvelope(await next.json()).code, "ok");
      assert.equal(await inFlight(), 0);
    } finally {
      release();
      await provider.close();
    }
  });
});

/** Serves Exa's recorded answer at its path, as the exa built-in calls it. */
const exaRecording = JSON.parse(
  readFileSync(new URL("./fixtures/recordings/exa-search.json", import.meta.url), "utf8"),
);
const exa: Handler = (req, res) => {
  const { request, response } = exaRecording;
  const hit = req.method === request.method && req.url === request.path;
  res.writeHead(hit ? response.status : 404, response.headers);
  res.end(JSON.stringify(hit ? response.body : { message: "Not Found" }));
};

/** Latencies and request ids differ between runs; nothing else may. */
function stable(envelope: unknown): unknown {
  return JSON.parse(
    JSON.stringify(
      envelope,
      (key, value) => key === "latency_ms" || key === "request_id" ? 0 : value,
    ),
  );
}

describe("the CLI's in-process search is the gateway's search", () => {
  const servers: TestServer[] = [];
  let dir: string;
  let manifestPath: string;
  let env: Record<string, string>;

  before(async () => {
    const alpha = await startServer(answer("alpha", "alpha", [
      { title: "Deadlines in practice", locator: "https://shared.example/deadlines" },
      { title: "Only alpha", locator: "https://alpha.example/1" },
    ]));
    const beta = await startServer(answer("beta", "beta", [
      { title: "Deadlines, again", locator: "https://www.shared.example/deadlines/" },
    ]));
    const upstream = await startServer(exa);
    servers.push(alpha, beta, upstream);
    dir = await mkdtemp(join(tmpdir(), "tracefetch-run-"));
    manifestPath = join(dir, "manifest.json");
    await writeFile(
      manifestPath,
      JSON.stringify(manifestOf([
        { name: "alpha", endpoint: alpha.url, weight: 2 },
        { name: "beta", endpoint: beta.url },
        { name: "exa", scope: "web", cost_micros: 1 },
      ])),
    );
    env = {
      // Spelt as a person might: every boolean spelling means the same to the CLI and the server.
      TRACEFETCH_ALLOW_LOOPBACK: "yes",
      EXA_API_KEY: "exa-test-key-5e1f0c9d2b7a4e38",
      EXA_BASE_URL: `http://127.0.0.1:${upstream.port}`,
    };
  });
  after(async () => {
    for (const s of servers) await s.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("search x --manifest m.json answers the envelope npm start answers for m.json, built-in keys included", async () => {
    const served = await launch(
      readSettings({ ...env, TRACEFETCH_MANIFEST: manifestPath, PORT: "0" }),
      (fetch, host, port, deadlines) => listen(fetch, host, port, deadlines),
    );
    let overHttp;
    try {
      overHttp = assertEnvelope(
        await (await fetch(`${served.url}/v1/search?q=deadlines&limit=5`)).json(),
      );
    } finally {
      await served.close();
    }
    const inProcess = await runJson(
      ["search", "deadlines", "--limit", "5", "--manifest", manifestPath],
      { env },
    );
    assert.equal(overHttp.code, "ok");
    assert.deepEqual(overHttp.result.decision.providers, ["alpha", "beta", "exa"]);
    assert.equal(overHttp.result.candidates[2].outcome, "success", "exa was called with its key");
    assert.deepEqual(stable(inProcess.envelope), stable(overHttp));
  });

  it("validate: TRACEFETCH_ALLOW_LOOPBACK=On permits loopback endpoints; =maybe is refused naming the variable", async () => {
    const on = await runJson(["validate", manifestPath], {
      env: { TRACEFETCH_ALLOW_LOOPBACK: "On" },
    });
    assert.equal(on.envelope.code, "ok");
    const maybe = await runJson(["validate", manifestPath], {
      env: { TRACEFETCH_ALLOW_LOOPBACK: "maybe" },
    });
    assert.equal(maybe.envelope.code, "invalid_field");
    assert.equal(
      maybe.envelope.error.message,
      'TRACEFETCH_ALLOW_LOOPBACK must be one of 1/true/yes/on or 0/false/no/off, got "maybe"',
    );
  });
});
