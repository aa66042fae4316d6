/**
 * `tracefetch expand` and `tracefetch doctor` against a real gateway on 127.0.0.1 over the corpus
 * provider, and `doctor` against a gateway without /v1/doctor.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { corpusAdapter } from "../providers/corpus/corpus-adapter.ts";
import { serveProvider } from "../src/kit/serve-provider.ts";
import { createGateway } from "../src/http/mod.ts";
import { listen, type Listening } from "../src/runtime/node-listen.ts";
import { manifestOf, settingsFor } from "./support/gateway.ts";
import { runCli, runJson } from "./support/cli.ts";

const LONG = "word ".repeat(400);

describe("tracefetch expand and doctor", () => {
  let corpus: Listening;
  let gateway: Listening;
  let oldGateway: Listening;
  let url: string;
  before(async () => {
    corpus = await listen(
      serveProvider(corpusAdapter("notes", "notes", [
        { title: "Deadlines", locator: "https://notes.example/deadlines", text: LONG },
      ])).fetch,
      "127.0.0.1",
      0,
    );
    const app = createGateway(settingsFor(
      manifestOf([
        { name: "notes", scope: "notes", endpoint: `http://127.0.0.1:${corpus.port}/search` },
      ]),
      {},
      { allowLoopback: true, describeProviders: false },
    ));
    gateway = await listen(app.fetch, "127.0.0.1", 0);
    url = `http://127.0.0.1:${gateway.port}`;
    // A gateway from before /v1/doctor: that route is not found.
    oldGateway = await listen(
      (request) =>
        new URL(request.url).pathname === "/v1/doctor"
          ? app.fetch(new Request(new URL("/v1/nothing-here", request.url)))
          : app.fetch(request),
      "127.0.0.1",
      0,
    );
  });
  after(async () => {
    await gateway.close();
    await oldGateway.close();
    await corpus.close();
  });

  it("expand --json prints the envelope with the whole text", async () => {
    const run = await runJson([
      "expand",
      "notes",
      "https://notes.example/deadlines",
      "--gateway",
      url,
    ]);
    assert.equal(run.envelope.code, "ok");
    assert.equal(run.envelope.result.evidence.text, LONG);
  });

  it("expand shows a person the title and the start of the text", async () => {
    const run = await runCli([
      "expand",
      "notes",
      "https://notes.example/deadlines",
      "--gateway",
      url,
    ]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^Deadlines\n/);
    assert.match(run.stdout, /word word/);
    assert.match(run.stdout, /more characters; --json prints them all/);
    assert.ok(run.stdout.length < LONG.length, "only the start of the text");
  });

  it("expand of a locator the provider never issued exits 2 with locator_unknown", async () => {
    const run = await runJson(["expand", "notes", "https://notes.example/never", "--gateway", url]);
    assert.equal(run.envelope.code, "locator_unknown");
    assert.equal(run.code, 2);
  });

  it("expand without both arguments is a usage error", async () => {
    const run = await runJson(["expand", "notes", "--gateway", url]);
    assert.equal(run.envelope.code, "invalid_field");
    assert.equal(run.code, 2);
  });

  it("doctor reads each provider's health from /v1/doctor", async () => {
    const run = await runJson(["doctor", "--gateway", url]);
    const gatewayCheck = run.envelope.result.checks.find((c: { check: string }) =>
      c.check === "gateway"
    );
    assert.equal(gatewayCheck.ok, true, gatewayCheck.message);
    assert.match(gatewayCheck.message, /1 of 1 providers ready/);
  });

  it("doctor falls back to /v1/status when the gateway has no /v1/doctor", async () => {
    const run = await runJson(["doctor", "--gateway", `http://127.0.0.1:${oldGateway.port}`]);
    const gatewayCheck = run.envelope.result.checks.find((c: { check: string }) =>
      c.check === "gateway"
    );
    assert.equal(gatewayCheck.ok, true, gatewayCheck.message);
    assert.match(gatewayCheck.message, /tracefetch-edge .*1 of 1 providers ready/);
  });
});
