/**
 * The provider actions beyond search, in workerd: expand, doctor's health probes, refresh, and
 * describe negotiation, through the bundled worker (tests/workerd/miniflare.ts) over real providers
 * on 127.0.0.1 (the corpus provider through serveProvider). The same contract as the Node tests
 * expand-route, doctor-route, refresh-route and describe-negotiation. One worker serves them all,
 * with the background describe on; a test that counts requests counts only its own action.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Miniflare } from "miniflare";
import { corpusAdapter, type CorpusDocument } from "../../providers/corpus/corpus-adapter.ts";
import { serveProvider } from "../../src/kit/serve-provider.ts";
import { listen } from "../../src/runtime/node-listen.ts";
import { assertEnvelope, manifestOf } from "../support/gateway.ts";
import { AUDIENCE, ISSUER, type KeyPair, keyPair, sign } from "../support/auth-keys.ts";
import {
  answer,
  type Handler,
  raw,
  sleep,
  startServer,
  type TestServer,
} from "../support/servers.ts";
import { startWorker } from "./miniflare.ts";

/** Long enough that every concurrent doctor call arrives while the first probe is out. */
const HEALTH_DELAY_MS = 300;
/** Concurrent doctor callers: enough to overlap one probe many times over. */
const DOCTOR_CALLERS = 30;
/** How long a test waits for the background describe answers to be taken, in 50 ms steps. */
const DESCRIBE_POLLS = 60;

/** The providers the doctor test counts probes of: healthy, no health (501, 404), failing. */
const DOCTORED = ["well", "bare", "gone", "broken"];

const DOCS: CorpusDocument[] = [
  {
    title: "Deadlines",
    locator: "https://notes.example/deadlines",
    text: "Every call has a deadline.",
  },
  { title: "Retries", locator: "https://notes.example/retries", text: "Retry with jitter." },
];

const actionOf = (body: string): string | undefined => {
  try {
    return (JSON.parse(body) as { action?: string }).action;
  } catch {
    return undefined;
  }
};
const count = (server: TestServer, action: string) =>
  server.requests.filter((r) => actionOf(r.body) === action).length;

/** Answers health after a delay; every other action gets one search candidate. */
function healthy(name: string): Handler {
  const search = answer(name, name, [{ title: "T", locator: `https://${name}.example/1` }]);
  return (req, res, body) => {
    if (actionOf(body) !== "health") return search(req, res, body);
    setTimeout(() => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({
        schema_version: "tracefetch.provider-health.v1",
        provider: name,
        scope: name,
        status: "ok",
        coverage: "complete",
        watermark: "2026-01-01T00:00:00Z",
        diagnostics: [],
      }));
    }, HEALTH_DELAY_MS);
  };
}

/** A search provider whose describe answer the test picks. */
function negotiating(name: string, onDescribe: Handler): Handler {
  const search = answer(name, "neg", [{ title: "T", locator: `https://good.org/${name}` }]);
  return (req, res, body) =>
    actionOf(body) === "describe" ? onDescribe(req, res, body) : search(req, res, body);
}

const describes = (name: string, versions: number[]): Handler =>
  raw(
    200,
    JSON.stringify({
      schema_version: "tracefetch.provider-describe.v1",
      provider: name,
      scope: "neg",
      actions: ["search", "describe"],
      filters: [],
      protocol_versions: versions,
    }),
  );

describe("provider actions in workerd", () => {
  let current: CorpusDocument[] = DOCS;
  const notes = corpusAdapter("notes", "notes", DOCS, { reload: () => Promise.resolve(current) });
  let reloads = 0;
  const index = corpusAdapter("index", "index", DOCS, {
    reload: () => {
      reloads++;
      return Promise.resolve(DOCS);
    },
  });
  const corpora: Array<{ port: number; close: () => Promise<void> }> = [];
  const servers: Record<string, TestServer> = {};
  let key: KeyPair;
  let mf: Miniflare;

  before(async () => {
    for (const adapter of [notes, index]) {
      corpora.push(await listen(serveProvider(adapter).fetch, "127.0.0.1", 0));
    }
    const handlers: Record<string, Handler> = {
      well: healthy("well"),
      bare: raw(501, "{}"),
      gone: raw(404, "{}"),
      broken: raw(500, "{}"),
      v2only: negotiating("v2only", describes("v2only", [2])),
      both: negotiating("both", describes("both", [1, 2])),
      s404: negotiating("s404", raw(404, "{}")),
    };
    for (const [name, handler] of Object.entries(handlers)) {
      servers[name] = await startServer(handler);
    }
    key = await keyPair("EdDSA", "k1");
    const endpoint = (port: number) => `http://127.0.0.1:${port}/search`;
    mf = await startWorker({
      TRACEFETCH_ALLOW_LOOPBACK: "1",
      TRACEFETCH_AUTH_JWKS: JSON.stringify({ keys: [key.publicJwk] }),
      TRACEFETCH_AUTH_ISSUER: ISSUER,
      TRACEFETCH_AUTH_AUDIENCE: AUDIENCE,
      TRACEFETCH_MANIFEST: JSON.stringify(manifestOf([
        { name: "notes", endpoint: endpoint(corpora[0]!.port) },
        { name: "index", endpoint: endpoint(corpora[1]!.port) },
        ...DOCTORED.map((name) => ({ name, endpoint: servers[name]!.url })),
        ...["v2only", "both", "s404"].map((name) => ({
          name,
          scope: "neg",
          endpoint: servers[name]!.url,
          timeout_seconds: 5,
        })),
      ])),
    });
  });
  after(async () => {
    await mf?.dispose();
    for (const c of corpora) await c.close();
    await Promise.all(Object.values(servers).map((s) => s.close()));
  });

  const call = async (path: string, init: RequestInit = {}) => {
    const res = await mf.dispatchFetch(`http://gateway.test${path}`, init as never);
    return { res, body: assertEnvelope(await res.json()) };
  };
  const postJson = (path: string, body: unknown, token?: string) =>
    call(path, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      },
      body: JSON.stringify(body),
    });

  it("many concurrent doctor calls cause exactly one health probe per provider", async () => {
    const answers = await Promise.all(
      Array.from({ length: DOCTOR_CALLERS }, () => call("/v1/doctor")),
    );
    for (const { res, body } of answers) {
      assert.equal(res.status, 200);
      assert.equal(body.command, "doctor");
    }
    for (const name of DOCTORED) assert.equal(count(servers[name]!, "health"), 1, name);
    const byName = Object.fromEntries(
      answers[0]!.body.result.providers.map((p: { name: string }) => [p.name, p]),
    );
    assert.equal(byName.well.health.status, "ok");
    assert.equal(byName.notes.health.document_count, 2);
    assert.equal(byName.broken.health.status, "unavailable", "a failed probe is never healthy");
    assert.equal(byName.broken.health.coverage, "unknown");
    for (const name of ["bare", "gone"]) {
      assert.equal(byName[name].health.status, "unknown", `${name}: no health support`);
    }
  });

  it("expand returns the evidence and tells locator_unknown (404) from locator_expired (410)", async () => {
    const found = await postJson("/v1/expand", {
      provider: "notes",
      locator: "https://notes.example/deadlines",
    });
    assert.equal(found.res.status, 200);
    assert.equal(found.body.command, "expand");
    assert.equal(found.body.result.provider, "notes");
    assert.equal(found.body.result.evidence.text, DOCS[0]!.text);
    assert.equal(found.body.result.evidence.truncated, false);

    const unknown = await postJson("/v1/expand", {
      provider: "notes",
      locator: "https://notes.example/never",
    });
    assert.deepEqual([unknown.res.status, unknown.body.code], [404, "locator_unknown"]);
    assert.equal(unknown.body.result, undefined);

    current = [DOCS[0]!];
    await notes.refresh?.(AbortSignal.timeout(5_000));
    const expired = await postJson("/v1/expand", {
      provider: "notes",
      locator: "https://notes.example/retries",
    });
    assert.deepEqual([expired.res.status, expired.body.code], [410, "locator_expired"]);
    assert.equal(expired.body.action, "fix_input");
  });

  it("refresh is refused without a token (401) and without tracefetch-admin (403)", async () => {
    const none = await postJson("/v1/refresh", { provider: "index" });
    assert.deepEqual([none.res.status, none.body.action], [401, "login"]);
    const narrow = await postJson(
      "/v1/refresh",
      { provider: "index" },
      await sign(key, { scope: "tracefetch:*" }),
    );
    assert.deepEqual([narrow.res.status, narrow.body.action], [403, "check_access"]);
    assert.equal(reloads, 0, "nothing was refreshed");
  });

  it("refresh with tracefetch-admin reloads the provider and answers its health", async () => {
    const { res, body } = await postJson(
      "/v1/refresh",
      { provider: "index" },
      await sign(key, { scope: "tracefetch-admin" }),
    );
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.deepEqual([body.command, body.code], ["refresh", "ok"]);
    assert.equal(reloads, 1);
    assert.ok(JSON.stringify(body.result).includes('"status":"ok"'));
  });

  it("describe negotiation skips a major-2-only provider and still searches one answering 404", async () => {
    const negotiated = ["v2only", "both", "s404"].map((n) => servers[n]!);
    const search = () => call("/v1/search?q=t&scope=neg&view=full");
    await search();
    for (let i = 0; i < DESCRIBE_POLLS && negotiated.some((s) => count(s, "describe") === 0); i++) {
      await sleep(50);
    }
    let last = await search();
    for (let i = 0; i < DESCRIBE_POLLS && last.body.result.decision.skipped.length === 0; i++) {
      await sleep(50);
      last = await search();
    }
    const before = [count(servers.v2only!, "search"), count(servers.s404!, "search")];
    const { res, body } = await search();
    assert.equal(res.status, 200);
    assert.deepEqual([...body.result.decision.providers].sort(), ["both", "s404"]);
    assert.equal(body.result.decision.skipped.length, 1);
    const [skip] = body.result.decision.skipped;
    assert.deepEqual([skip.provider, skip.reason], ["v2only", "protocol_version_unsupported"]);
    assert.match(skip.message, /speaks protocol major 2; this gateway speaks major 1/);
    assert.equal(count(servers.v2only!, "search"), before[0], "a skipped provider is not searched");
    assert.equal(count(servers.s404!, "search"), before[1]! + 1, "a search-only provider is");
    for (const attempt of body.result.candidates) assert.equal(attempt.outcome, "success");
  });
});
