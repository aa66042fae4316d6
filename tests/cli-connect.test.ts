/**
 * `connect`, `status`, `doctor` and `conformance` through the real bin: the saved connection holds
 * the URL and the token's variable name (never the token), in a 0600 file.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createGateway } from "../src/http/mod.ts";
import { serveProvider } from "../src/kit/mod.ts";
import { listen, type Listening } from "../src/runtime/node-listen.ts";
import { corpusAdapter } from "../providers/corpus/corpus-adapter.ts";
import { buildEnvelope } from "../src/envelope/build-envelope.ts";
import { manifestOf, settingsFor } from "./support/gateway.ts";
import { answer, raw, startServer, type TestServer } from "./support/servers.ts";
import { runCli, runJson, tempConfig } from "./support/cli.ts";

const TOKEN = "tok-not-for-disk-8812";

describe("tracefetch connect, status, doctor and conformance", { concurrency: true }, () => {
  let provider: TestServer;
  let gateway: Listening;
  let url: string;
  /** A gateway that answers every route with a status envelope and records the tokens it gets. */
  let statusOnly: TestServer;
  let refusing: TestServer;
  let corpus: Listening;
  let broken: TestServer;
  const folders: Array<Awaited<ReturnType<typeof tempConfig>>> = [];
  const folder = async () => {
    const made = await tempConfig();
    folders.push(made);
    return made.dir;
  };

  before(async () => {
    provider = await startServer(answer("alpha", "alpha", []));
    const app = createGateway(
      settingsFor(manifestOf([{ name: "alpha", endpoint: provider.url }]), {}, {
        allowLoopback: true,
      }),
    );
    gateway = await listen(app.fetch);
    url = `http://127.0.0.1:${gateway.port}`;
    const status = await (await app.request("/v1/status")).text();
    statusOnly = await startServer(raw(200, status));
    refusing = await startServer(
      raw(
        401,
        JSON.stringify(
          buildEnvelope("status", "token_invalid", "fake", { error: { message: "bad token" } }),
        ),
      ),
    );
    const docs = [{
      title: "The deadline",
      locator: "https://notes.example/1",
      text: "the search deadline",
    }];
    corpus = await listen(serveProvider(corpusAdapter("notes", "notes", docs)).fetch);
    broken = await startServer(raw(200, "not the protocol"));
  });
  after(async () => {
    await gateway.close();
    await provider.close();
    await corpus.close();
    await broken.close();
    await statusOnly.close();
    await refusing.close();
    await Promise.all(folders.map((f) => f.remove()));
  });

  it("connect saves the URL and the variable's name in a 0600 file, never the token", async () => {
    const config = await folder();
    const saved = `http://127.0.0.1:${statusOnly.port}`;
    const run = await runJson(["connect", `${saved}/`, "--token-env", "MY_GATEWAY_TOKEN"], {
      config,
      env: { MY_GATEWAY_TOKEN: TOKEN },
    });
    assert.equal(run.envelope.code, "ok");
    assert.equal(run.envelope.command, "connect");
    const path = join(config, "tracefetch", "connection.json");
    assert.equal(run.envelope.result.saved_to, path);
    assert.equal(run.envelope.result.token_set, true);
    assert.equal((await stat(path)).mode & 0o777, 0o600);
    const text = await readFile(path, "utf8");
    assert.equal(text.includes(TOKEN), false);
    assert.deepEqual(JSON.parse(text), {
      version: 1,
      gateway: saved,
      token_env: "MY_GATEWAY_TOKEN",
    });
    assert.equal(run.stdout.includes(TOKEN), false);

    // status now goes to the saved gateway, with the token from the saved variable.
    const status = await runJson(["status"], { config, env: { MY_GATEWAY_TOKEN: TOKEN } });
    assert.equal(status.envelope.code, "ok");
    assert.equal(status.envelope.result.providers[0].name, "alpha");
    assert.deepEqual(
      statusOnly.requests.map((r) => [r.url, r.headers.authorization]),
      [["/v1/status", `Bearer ${TOKEN}`], ["/v1/status", `Bearer ${TOKEN}`]],
    );
  });

  it("connect with a token the gateway refuses is exit 3, login, and saves nothing", async () => {
    const config = await folder();
    const run = await runJson(["connect", `http://127.0.0.1:${refusing.port}`], {
      config,
      env: { TRACEFETCH_TOKEN: TOKEN },
    });
    assert.equal(run.code, 3);
    assert.equal(run.envelope.code, "token_invalid");
    assert.equal(run.envelope.action, "login");
    assert.equal(run.envelope.command, "connect");
    await assert.rejects(stat(join(config, "tracefetch", "connection.json")));
  });

  it("replacing a saved connection is a person's decision: human_decision_required, or --yes", async () => {
    const config = await folder();
    assert.equal((await runJson(["connect", url], { config })).envelope.code, "ok");
    const other = `http://127.0.0.1:${corpus.port}`;
    const asked = await runJson(["connect", other], { config });
    assert.equal(asked.code, 3);
    assert.equal(asked.envelope.code, "human_decision_required");
    assert.equal(asked.envelope.action, "connect");
    const path = join(config, "tracefetch", "connection.json");
    assert.equal(JSON.parse(await readFile(path, "utf8")).gateway, url, "unchanged");
    const replaced = await runJson(["connect", url, "--token-env", "OTHER_TOKEN", "--yes"], {
      config,
    });
    assert.equal(replaced.envelope.code, "ok");
    assert.equal(JSON.parse(await readFile(path, "utf8")).token_env, "OTHER_TOKEN");
  });

  it("connect refuses a gateway that does not answer, and saves nothing", async () => {
    const config = await folder();
    const run = await runJson(["connect", `http://127.0.0.1:${broken.port}`], { config });
    assert.equal(run.code, 4);
    assert.equal(run.envelope.code, "bad_gateway_answer");
    await assert.rejects(stat(join(config, "tracefetch", "connection.json")));
  });

  it("a broken saved connection: commands say so; doctor lists it with its action", async () => {
    const config = await folder();
    await runJson(["connect", url], { config });
    await writeFile(join(config, "tracefetch", "connection.json"), "{not json");
    const status = await runJson(["status"], { config });
    assert.equal(status.code, 2);
    assert.match(status.envelope.error.message, /connection\.json is not valid JSON/);
    const doctor = await runJson(["doctor", "--gateway", url], { config });
    assert.equal(doctor.envelope.command, "doctor");
    const checks = doctor.envelope.result.checks;
    assert.deepEqual(checks.map((c: { check: string; ok: boolean }) => [c.check, c.ok]), [
      ["connection", false],
      ["token", true],
      ["gateway", true],
    ]);
    assert.equal(checks[0].action, "fix_input");
    assert.equal(doctor.envelope.code, "invalid_field");
  });

  it("doctor lists every problem: a bad TRACEFETCH_MANIFEST and an unreachable gateway", async () => {
    const config = await folder();
    const closed = await startServer(raw(200, "{}"));
    await closed.close();
    const run = await runJson(["doctor", "--gateway", `http://127.0.0.1:${closed.port}`], {
      config,
      env: { TRACEFETCH_MANIFEST: '{"schema_version":"tracefetch.providers.v1"}' },
    });
    const problems = run.envelope.result.checks.filter((c: { ok: boolean }) => !c.ok);
    assert.deepEqual(
      problems.map((
        c: { check: string; code: string; action: string },
      ) => [c.check, c.code, c.action]),
      [
        ["manifest", "invalid_field", "fix_input"],
        ["gateway", "transport_error", "retry"],
      ],
    );
    assert.equal(run.envelope.code, "invalid_field", "the first problem decides the header");
    const human = await runCli(["doctor", "--gateway", `http://127.0.0.1:${closed.port}`], {
      config,
    });
    assert.match(
      human.stdout,
      /problem +gateway +could not reach .*\(transport_error; next: retry\)/,
    );
  });

  it("doctor on a healthy setup is ok, exit 0", async () => {
    const run = await runJson(["doctor", "--gateway", url], { config: await folder() });
    assert.equal(run.envelope.code, "ok");
    assert.ok(run.envelope.result.checks.every((c: { ok: boolean }) => c.ok));
  });

  it("conformance: a provider served by serveProvider passes every case", async () => {
    const endpoint = `http://127.0.0.1:${corpus.port}/search`;
    const run = await runJson(["conformance", endpoint, "--name", "notes", "--scope", "notes"]);
    assert.equal(run.envelope.code, "ok", JSON.stringify(run.envelope.result.cases));
    assert.equal(run.envelope.result.failed, 0);
    const human = await runCli(["conformance", endpoint, "--name", "notes", "--scope", "notes"]);
    assert.equal(human.code, 0);
    assert.match(human.stdout, /^TraceFetch provider conformance\n/);
    assert.match(human.stdout, /result: +PASS/);
  });

  it("conformance: a provider that does not speak the protocol fails, exit 2, each case listed", async () => {
    const run = await runJson(["conformance", broken.url, "--name", "broken", "--scope", "broken"]);
    assert.equal(run.code, 2);
    assert.equal(run.envelope.action, "fix_input");
    assert.ok(run.envelope.result.failed > 0);
    const missing = await runJson(["conformance", broken.url, "--name", "broken"]);
    assert.equal(missing.envelope.error.field, "scope");
  });
});
