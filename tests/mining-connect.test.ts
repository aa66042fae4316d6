/**
 * `tracefetch connect` shows what a gateway records of searches, from its `/v1/status`; a gateway
 * whose trace sink is configured but not confirmed (`undecided`) is a person's decision: machine
 * mode answers `human_decision_required` and saves nothing, `--yes` connects.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { exportJWK, generateKeyPair } from "jose";
import { createGateway } from "../src/http/mod.ts";
import { listen, type Listening } from "../src/runtime/node-listen.ts";
import { manifestOf, settingsFor } from "./support/gateway.ts";
import { answer, startServer, type TestServer } from "./support/servers.ts";
import { runCli, runJson, tempConfig } from "./support/cli.ts";

describe("tracefetch connect and the gateway's mining", () => {
  let provider: TestServer;
  const gateways: Listening[] = [];
  const folders: Array<Awaited<ReturnType<typeof tempConfig>>> = [];
  const folder = async () => {
    const made = await tempConfig();
    folders.push(made);
    return made.dir;
  };
  let env: Record<string, string>;

  before(async () => {
    provider = await startServer(answer("alpha", "alpha", []));
    const { privateKey } = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
    env = {
      TRACEFETCH_SIGNING_JWK: JSON.stringify(await exportJWK(privateKey)),
      TRACEFETCH_GATEWAY_ISSUER: "https://gateway.example",
      TRACEFETCH_TRACE_WEBHOOK: "https://collector.example/traces",
      TRACEFETCH_TRACE_SECRET: "s".repeat(32),
    };
  });
  after(async () => {
    for (const g of gateways) await g.close();
    await provider.close();
    await Promise.all(folders.map((f) => f.remove()));
  });

  const serve = async (env: Record<string, string>) => {
    const manifest = manifestOf([{ name: "alpha", endpoint: provider.url }]);
    const app = createGateway(
      settingsFor(manifest, env, { allowLoopback: true, describeProviders: false }),
    );
    const served = await listen(app.fetch);
    gateways.push(served);
    return `http://127.0.0.1:${served.port}`;
  };

  it("undecided: machine mode answers human_decision_required and saves nothing; --yes connects", async () => {
    const url = await serve(env);
    const config = await folder();
    const asked = await runJson(["connect", url], { config });
    assert.equal(asked.code, 3);
    assert.equal(asked.envelope.code, "human_decision_required");
    assert.equal(asked.envelope.action, "connect");
    assert.match(asked.envelope.error.message, /mining undecided.*run again with --yes/);
    await assert.rejects(stat(join(config, "tracefetch", "connection.json")));

    const human = await runCli(["connect", url], { config });
    assert.equal(human.code, 3, "no terminal to ask: the same answer");
    assert.match(human.stderr, /human_decision_required; next: connect/);

    const yes = await runJson(["connect", url, "--yes"], { config });
    assert.equal(yes.envelope.code, "ok");
    assert.equal(yes.envelope.result.mining.state, "undecided");
    assert.match(yes.envelope.result.mining.health[0], /TRACEFETCH_MINING_CONFIRMED=1/);
    const saved = JSON.parse(await readFile(join(config, "tracefetch", "connection.json"), "utf8"));
    assert.equal(saved.gateway, url);
  });

  it("enabled: connects and says every search is recorded", async () => {
    const url = await serve({ ...env, TRACEFETCH_MINING_CONFIRMED: "1" });
    const run = await runJson(["connect", url], { config: await folder() });
    assert.equal(run.envelope.code, "ok");
    assert.deepEqual(run.envelope.result.mining, {
      state: "enabled",
      configured: true,
      health: [],
    });
    const human = await runCli(["connect", url], { config: await folder() });
    assert.equal(human.code, 0);
    assert.match(human.stdout, /^mining: enabled: a trace of every search is recorded/m);
  });

  it("disabled: connects and says searches are not recorded", async () => {
    const url = await serve({});
    const run = await runJson(["connect", url], { config: await folder() });
    assert.equal(run.envelope.result.mining.state, "disabled");
    const human = await runCli(["connect", url], { config: await folder() });
    assert.match(human.stdout, /^mining: disabled: searches are not recorded$/m);
  });
});
