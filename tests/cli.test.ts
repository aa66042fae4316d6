/**
 * The `tracefetch` bin against a real gateway on 127.0.0.1 (and small fake gateways for what the
 * real one does not say yet): stdout, stderr and the exit code of every outcome of a search.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createGateway } from "../src/http/mod.ts";
import { buildEnvelope } from "../src/envelope/build-envelope.ts";
import { listen, type Listening } from "../src/runtime/node-listen.ts";
import { manifestOf, settingsFor } from "./support/gateway.ts";
import { answer, hold, raw, startServer, type TestServer } from "./support/servers.ts";
import { runCli, runJson } from "./support/cli.ts";

const ALPHA = [
  { title: "Deadlines in practice", locator: "https://shared.example/deadlines" },
  { title: "Only alpha", locator: "https://alpha.example/1" },
];
const BETA = [{ title: "Deadlines, again", locator: "https://www.shared.example/deadlines/" }];

const envelopeText = (code: Parameters<typeof buildEnvelope>[1], extra = {}) =>
  JSON.stringify(
    buildEnvelope("search", code, "fake-gateway", { error: { message: `fake ${code}` }, ...extra }),
  );

describe("tracefetch search against a gateway", { concurrency: true }, () => {
  const servers: TestServer[] = [];
  let gateway: Listening;
  let url: string;
  /** What reached the real gateway: each request's query and Accept header. */
  const seen: Array<{ query: string; accept: string | null }> = [];
  const fake: Record<string, string> = {};
  let closedPort: string;

  before(async () => {
    const start = async (handler: Parameters<typeof startServer>[0]) => {
      const server = await startServer(handler);
      servers.push(server);
      return server;
    };
    const alpha = await start(answer("alpha", "alpha", ALPHA));
    const beta = await start(answer("beta", "beta", BETA));
    const broken = await start(raw(500, "upstream fault"));
    const app = createGateway(settingsFor(
      manifestOf([
        { name: "alpha", endpoint: alpha.url },
        { name: "beta", endpoint: beta.url },
        { name: "broken", endpoint: broken.url, timeout_seconds: 2 },
      ]),
      {},
      { allowLoopback: true },
    ));
    gateway = await listen(async (request) => {
      const body = await request.clone().text();
      const query = body === "" ? "" : String(JSON.parse(body).query);
      seen.push({ query, accept: request.headers.get("accept") });
      return app.fetch(request);
    });
    url = `http://127.0.0.1:${gateway.port}`;
    const fakes: Record<string, Parameters<typeof startServer>[0]> = {
      unauthorized: raw(401, envelopeText("unauthorized")),
      forbidden: raw(403, envelopeText("forbidden")),
      limited: raw(429, envelopeText("rate_limited", { retry_after_ms: 2_000 }), {
        "retry-after": "2",
      }),
      text: raw(200, "hello, I am not an envelope", { "content-type": "text/plain" }),
      proxy401: raw(401, "<html>sign in</html>", { "content-type": "text/html" }),
      silent: hold,
    };
    for (const [name, handler] of Object.entries(fakes)) {
      fake[name] = `http://127.0.0.1:${(await start(handler)).port}`;
    }
    const closed = await startServer(raw(200, "{}"));
    closedPort = `http://127.0.0.1:${closed.port}`;
    await closed.close();
  });
  after(async () => {
    await gateway.close();
    await Promise.all(servers.map((s) => s.close()));
  });

  it("a good search: one envelope, code ok, exit 0, nothing on stderr", async () => {
    const run = await runJson([
      "search",
      "deadlines",
      "--gateway",
      url,
      "--provider",
      "alpha",
      "--provider",
      "beta",
    ]);
    assert.equal(run.envelope.code, "ok");
    assert.equal(run.code, 0);
    assert.equal(run.stderr, "");
    const [first] = run.envelope.result.merged;
    assert.deepEqual(first.found_by, ["alpha", "beta"]);
    assert.deepEqual(run.envelope.result.candidates.map((c: { provider: string }) => c.provider), [
      "alpha",
      "beta",
    ]);
  });

  it("a good search for people: a table of results and providers, read from the event stream", async () => {
    const run = await runCli([
      "search",
      "deadlines",
      "for",
      "people",
      "--gateway",
      url,
      "--provider",
      "alpha,beta",
    ]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stderr, "", "no progress line when stderr is not a terminal");
    assert.match(run.stdout, /^ {2}# {2}title +found by +locator$/m);
    assert.match(
      run.stdout,
      /^ {2}1 {2}Deadlines in practice +alpha, beta +https:\/\/shared\.example\/deadlines$/m,
    );
    assert.match(run.stdout, /^ {2}alpha +success +\d+ ms +2 results$/m);
    assert.match(run.stdout, /^ok: 2 results from 2 of 2 providers/m);
    assert.match(run.stdout, /warning: results are untrusted/);
    assert.equal(run.stdout.includes("\u001b["), false, "no colour with NO_COLOR and no terminal");
    const request = seen.find((r) => r.query === "deadlines for people");
    assert.equal(request?.accept?.startsWith("application/x-ndjson"), true);
  });

  it("a partial search is still ok (exit 0), and says which provider failed", async () => {
    const run = await runJson([
      "search",
      "deadlines",
      "--gateway",
      url,
      "--provider",
      "alpha,broken",
    ]);
    assert.equal(run.envelope.code, "partial");
    assert.equal(run.envelope.action, "none");
    const human = await runCli([
      "search",
      "deadlines",
      "--gateway",
      url,
      "--provider",
      "alpha,broken",
    ]);
    assert.equal(human.code, 0);
    assert.match(human.stdout, /^ {2}broken +search_failed +\d+ ms +.*500/m);
    assert.match(human.stdout, /^partial: 2 results from 1 of 2 providers/m);
  });

  it("every provider failing is exit 4, all_providers_failed, action retry", async () => {
    const run = await runJson(["search", "deadlines", "--gateway", url, "--provider", "broken"]);
    assert.equal(run.code, 4);
    assert.equal(run.envelope.code, "all_providers_failed");
    assert.equal(run.envelope.action, "retry");
    const human = await runCli(["search", "deadlines", "--gateway", url, "--provider", "broken"]);
    assert.equal(human.code, 4);
    assert.match(human.stdout, /^ {2}broken +search_failed/m);
    assert.match(human.stderr, /\(all_providers_failed; next: retry\)/);
  });

  it("a request the CLI refuses never reaches the gateway", async () => {
    const run = await runJson(["search", "never sent", "--gateway", url, "--limit", "0"]);
    assert.equal(run.code, 2);
    assert.equal(run.envelope.code, "limit_out_of_range");
    assert.equal(run.envelope.error.field, "limit");
    const unknown = await runJson(["search", "never sent", "--gateway", url, "--colour"]);
    assert.equal(unknown.envelope.code, "unknown_field");
    assert.equal(seen.some((r) => r.query === "never sent"), false);
  });

  it("no gateway reachable: exit 1, transport_error, action retry", async () => {
    const run = await runJson(["search", "deadlines", "--gateway", closedPort]);
    assert.equal(run.code, 1);
    assert.equal(run.envelope.code, "transport_error");
    assert.equal(run.envelope.action, "retry");
    assert.match(run.envelope.error.message, /ECONNREFUSED/);
    const human = await runCli(["search", "deadlines", "--gateway", closedPort]);
    assert.equal(human.code, 1);
    assert.equal(human.stdout, "");
    assert.match(human.stderr, /could not reach the gateway .*\(transport_error; next: retry\)/);
  });

  it("a gateway that never answers: exit 1, gateway_timeout, after timeout_ms plus 5 s", async () => {
    const started = performance.now();
    const run = await runJson([
      "search",
      "deadlines",
      "--gateway",
      fake.silent as string,
      "--timeout-ms",
      "1",
    ]);
    const waited = performance.now() - started;
    assert.equal(run.envelope.code, "gateway_timeout");
    assert.equal(run.envelope.action, "retry");
    // The CLI's own wait is in its message; wall-clock time adds process start-up under load.
    assert.match(run.envelope.error.message, /did not answer within 5001 ms/);
    assert.ok(waited >= 5_000, `waited only ${waited} ms`);
  });

  it("a 401 is exit 3, action login (never connect)", async () => {
    const run = await runJson(["search", "deadlines", "--gateway", fake.unauthorized as string]);
    assert.equal(run.code, 3);
    assert.equal(run.envelope.code, "unauthorized");
    assert.equal(run.envelope.action, "login");
    const proxy = await runJson(["search", "deadlines", "--gateway", fake.proxy401 as string]);
    assert.equal(
      proxy.envelope.code,
      "unauthorized",
      "a 401 without an envelope still means log in",
    );
    assert.equal(proxy.envelope.action, "login");
    const human = await runCli(["search", "deadlines", "--gateway", fake.unauthorized as string]);
    assert.equal(human.code, 3);
    assert.match(human.stderr, /fake unauthorized \(unauthorized; next: login\)/);
  });

  it("a 403 is exit 3, action check_access", async () => {
    const run = await runJson(["search", "deadlines", "--gateway", fake.forbidden as string]);
    assert.equal(run.code, 3);
    assert.equal(run.envelope.code, "forbidden");
    assert.equal(run.envelope.action, "check_access");
  });

  it("a 429 is exit 3, action retry, with retry_after_ms", async () => {
    const run = await runJson(["search", "deadlines", "--gateway", fake.limited as string]);
    assert.equal(run.code, 3);
    assert.equal(run.envelope.code, "rate_limited");
    assert.equal(run.envelope.action, "retry");
    assert.equal(run.envelope.retry_after_ms, 2_000);
    const human = await runCli(["search", "deadlines", "--gateway", fake.limited as string]);
    assert.match(human.stderr, /\(rate_limited; next: retry, after 2 s\)/);
  });

  it("an answer that is not an envelope is exit 4, bad_gateway_answer, action report", async () => {
    const run = await runJson(["search", "deadlines", "--gateway", fake.text as string]);
    assert.equal(run.code, 4);
    assert.equal(run.envelope.code, "bad_gateway_answer");
    assert.equal(run.envelope.action, "report");
  });

  it("a token never crosses plain http to a host that is not loopback", async () => {
    const run = await runJson(["search", "deadlines", "--gateway", "http://gateway.example"], {
      env: { TRACEFETCH_TOKEN: "secret-token-value" },
    });
    assert.equal(run.code, 2);
    assert.equal(run.envelope.code, "invalid_field");
    assert.equal(run.envelope.error.field, "gateway");
    assert.match(run.envelope.error.message, /plain http/);
    assert.equal(run.stdout.includes("secret-token-value"), false);
  });
});
