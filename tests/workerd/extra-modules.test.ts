/**
 * The worker's extra modules, each loaded by a dynamic import the first time it is needed, answer
 * in workerd as they do on Node: the JSON Schemas, the expand and refresh routes, and the remote
 * built-ins (loaded while the isolate configures itself, because GITHUB_TOKEN is set).
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import type { Miniflare } from "miniflare";
import { answer, type Handler, startServer, type TestServer } from "../support/servers.ts";
import { assertEnvelope, manifestOf } from "../support/gateway.ts";
import { SCHEMA_NAMES } from "../../src/protocol/schema-names.ts";
import { startWorker } from "./miniflare.ts";

const TOKEN = `ghp_${"T0k3n".repeat(8)}`;

/** GitHub's search answers, recorded; anything else is a 404. */
const replayGithub: Handler = (req, res) => {
  const path = new URL(req.url ?? "/", "http://x").pathname;
  const name = { "/search/repositories": "repositories", "/search/issues": "issues" }[path];
  if (name === undefined) {
    res.writeHead(404, { "content-type": "application/json" });
    res.end(JSON.stringify({ message: "Not Found" }));
    return;
  }
  const recording = JSON.parse(
    readFileSync(
      new URL(`../fixtures/recordings/github-search-${name}.json`, import.meta.url),
      "utf8",
    ),
  );
  res.writeHead(recording.response.status, recording.response.headers);
  res.end(JSON.stringify(recording.response.body));
};

describe("the worker's extra modules in workerd", () => {
  let github: TestServer;
  let mf: Miniflare;

  before(async () => {
    github = await startServer(replayGithub);
    mf = await startWorker({
      TRACEFETCH_ALLOW_LOOPBACK: "1",
      GITHUB_TOKEN: TOKEN,
      GITHUB_API_URL: `http://127.0.0.1:${github.port}`,
      TRACEFETCH_MANIFEST: JSON.stringify(manifestOf([
        { name: "workspace", scope: "local" },
        { name: "github", scope: "code" },
      ])),
    });
  });
  after(async () => {
    await mf?.dispose();
    await github?.close();
  });

  const fetchJson = async (path: string, init?: RequestInit) => {
    const res = await mf.dispatchFetch(`http://gateway.test${path}`, init as never);
    return { res, body: await res.json() as Record<string, unknown> };
  };
  const post = (path: string, body: unknown) =>
    fetchJson(path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  it("GET /schemas/envelope.json answers the generated schema, byte for byte as JSON", async () => {
    const { res, body } = await fetchJson("/schemas/envelope.json");
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
    const expected = JSON.parse(
      readFileSync(new URL("../../schemas/envelope.json", import.meta.url), "utf8"),
    );
    assert.deepEqual(body, expected);
  });

  it("every schema GET / lists is served", async () => {
    const index = assertEnvelope((await fetchJson("/")).body);
    assert.deepEqual(index.result.schemas, SCHEMA_NAMES.map((name) => `/schemas/${name}.json`));
    for (const path of index.result.schemas as string[]) {
      const { res, body } = await fetchJson(path);
      assert.equal(res.status, 200, path);
      assert.equal(body.$id, `https://tracefetch.dev${path}`);
    }
  });

  it("POST /v1/expand answers the evidence behind a locator the workspace listed", async () => {
    const found = assertEnvelope(
      (await fetchJson("/v1/search?q=deadline&providers=workspace")).body,
    );
    const locator = found.result.merged[0]?.locator;
    assert.equal(typeof locator, "string", JSON.stringify(found).slice(0, 500));
    const { res, body } = await post("/v1/expand", { provider: "workspace", locator });
    const envelope = assertEnvelope(body);
    assert.equal(res.status, 200, JSON.stringify(envelope));
    assert.equal(envelope.code, "ok");
    assert.equal(envelope.result.provider, "workspace");
    assert.equal(envelope.result.evidence.locator, locator);
    assert.ok(envelope.result.evidence.text.length > 0);
  });

  it("POST /v1/expand refuses a malformed body before contacting anyone", async () => {
    const { res, body } = await post("/v1/expand", { provider: "workspace" });
    assert.equal(res.status, 400);
    assert.equal(assertEnvelope(body).error.field, "locator");
  });

  it("POST /v1/refresh without a token is unauthorized", async () => {
    const { res, body } = await post("/v1/refresh", { provider: "workspace" });
    assert.equal(res.status, 401);
    assert.equal(assertEnvelope(body).code, "unauthorized");
  });

  it("the github built-in, set up from GITHUB_TOKEN, searches with its token", async () => {
    const { body } = await fetchJson("/v1/search?q=tetris&providers=github");
    const envelope = assertEnvelope(body);
    assert.equal(envelope.code, "ok", JSON.stringify(envelope).slice(0, 500));
    assert.ok(
      envelope.result.merged.some((m: { locator: string }) =>
        m.locator === "https://github.com/dtrupenn/Tetris"
      ),
    );
    assert.ok(github.requests.length > 0);
    for (const r of github.requests) assert.equal(r.headers.authorization, `Bearer ${TOKEN}`);
  });
});

describe("the worker's main module alone, its extra modules left out", () => {
  let provider: TestServer;
  let mf: Miniflare;

  before(async () => {
    provider = await startServer(
      answer("p", "p", [{ title: "P", locator: "https://p.example/1" }]),
    );
    mf = await startWorker({
      TRACEFETCH_ALLOW_LOOPBACK: "1",
      TRACEFETCH_MANIFEST: JSON.stringify(manifestOf([
        { name: "workspace", scope: "local" },
        { name: "p", endpoint: provider.url },
      ])),
    }, { withoutExtraModules: true, quiet: true });
  });
  after(async () => {
    await mf?.dispose();
    await provider?.close();
  });

  const get = async (path: string) => {
    const res = await mf.dispatchFetch(`http://gateway.test${path}`);
    return { res, body: assertEnvelope(await res.json()) };
  };

  it("searches, plain and streamed, and every other route but the optional ones", async () => {
    const { res, body } = await get("/v1/search?q=deadline&providers=workspace,p");
    assert.equal(res.status, 200);
    assert.equal(body.code, "ok");
    const streamed = await mf.dispatchFetch("http://gateway.test/v1/search?q=p&stream=ndjson");
    const lines = (await streamed.text()).trim().split("\n").map((l) => JSON.parse(l));
    assert.equal(lines.at(-1)?.event, "done");
    for (const path of ["/", "/v1/providers", "/v1/status", "/v1/doctor"]) {
      assert.equal((await get(path)).body.code, "ok", path);
    }
  });

  it("a schema, which lives in an extra module, is an internal_error rather than a hang", async () => {
    const { res, body } = await get("/schemas/envelope.json");
    assert.equal(res.status, 500);
    assert.equal(body.code, "internal_error");
  });
});
