/**
 * The named provider faults of tests/provider-hardening.test.ts and tests/redaction.test.ts,
 * against the bundled worker in workerd, whose provider client is workerd's own fetch: bodiless
 * answers, undecodable bodies, uncapped waits, array metadata and secrets in every diagnostic.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { gzipSync } from "node:zlib";
import type { Miniflare } from "miniflare";
import { MAX_PROVIDER_WAIT_MS } from "../../src/protocol/limits.ts";
import { type Handler, startServer, type TestServer } from "../support/servers.ts";
import { assertEnvelope, manifestOf } from "../support/gateway.ts";
import { startWorker } from "./miniflare.ts";

const SECRET = "zq9SECRETvalue";
const answerOf = (name: string, candidates: unknown[], extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    schema_version: "tracefetch.provider-response.v1",
    provider: name,
    scope: name,
    candidates,
    warnings: [],
    ...extra,
  });

type Case = {
  name: string;
  handler: (name: string) => Handler;
  outcome: string;
  code: string;
  check?: (attempt: Record<string, unknown>) => void;
};

const empty = (status: number): Case["handler"] => () => (_req, res) => {
  res.writeHead(status);
  res.end();
};

const CASES: Case[] = [
  {
    name: "no-content",
    handler: empty(204),
    outcome: "provider_protocol_error",
    code: "invalid_json",
  },
  {
    name: "reset-content",
    handler: empty(205),
    outcome: "provider_protocol_error",
    code: "invalid_json",
  },
  {
    name: "not-modified",
    handler: empty(304),
    outcome: "provider_protocol_error",
    code: "redirect",
  },
  {
    name: "bad-gzip",
    handler: () => (_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" });
      res.end("this is not gzip");
    },
    outcome: "provider_protocol_error",
    code: "invalid_encoding",
  },
  {
    name: "huge-wait",
    handler: () => (_req, res) => {
      res.writeHead(429, { "content-type": "application/json", "retry-after": "9".repeat(25) });
      res.end(JSON.stringify({
        schema_version: "tracefetch.provider-error.v1",
        code: "rate_limited",
        retry_after_ms: 1e308,
      }));
    },
    outcome: "search_failed",
    code: "rate_limited",
    check: (a) => assert.equal(a.retry_after_ms, MAX_PROVIDER_WAIT_MS),
  },
  {
    name: "array-metadata",
    handler: (name) => (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(answerOf(name, [{ title: "t", locator: "https://a.example/", metadata: [1, 2] }]));
    },
    outcome: "provider_protocol_error",
    code: "schema_violation",
  },
  {
    name: "leaky-error",
    handler: () => (_req, res) => {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({
        schema_version: "tracefetch.provider-error.v1",
        code: "search_failed",
        message: `upstream said Authorization: Bearer: ${SECRET} and bearer%20${SECRET}`,
      }));
    },
    outcome: "search_failed",
    code: "search_failed",
  },
  {
    name: "leaky-metadata",
    handler: (name) => (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(answerOf(name, [{
        title: "t",
        locator: "https://a.example/",
        metadata: { note: `Bearer\u200B${SECRET}`, list: [`api_key=${SECRET}`] },
      }], { warnings: [`token=${SECRET}`] }));
    },
    outcome: "success",
    code: "ok",
  },
];

describe("provider faults in workerd", () => {
  const servers: TestServer[] = [];
  let mf: Miniflare;

  before(async () => {
    const entries = [];
    for (const c of CASES) {
      const server = await startServer(c.handler(c.name));
      servers.push(server);
      entries.push({ name: c.name, endpoint: server.url, timeout_seconds: 5 });
    }
    // A gzip body that does decode, so the failing one above is told apart from gzip itself.
    const good = await startServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" });
      res.end(gzipSync(answerOf("good", [{ title: "g", locator: "https://g.example/" }])));
    });
    servers.push(good);
    entries.push({ name: "good", endpoint: good.url });
    mf = await startWorker({
      TRACEFETCH_ALLOW_LOOPBACK: "1",
      TRACEFETCH_MANIFEST: JSON.stringify(manifestOf(entries)),
    }, { quiet: true });
  });
  after(async () => {
    await mf?.dispose();
    for (const s of servers) await s.close();
  });

  for (const c of CASES) {
    it(`${c.name}: ${c.outcome} / ${c.code}, no secret shown, the other provider intact`, async () => {
      const res = await mf.dispatchFetch(
        `http://gateway.test/v1/search?q=x&providers=${c.name},good`,
      );
      const text = await res.text();
      const body = assertEnvelope(JSON.parse(text));
      const [attempt, good] = body.result.candidates;
      assert.equal(attempt.outcome, c.outcome, text);
      assert.equal(attempt.code, c.code, text);
      assert.equal(good.outcome, "success");
      assert.ok(!text.includes(SECRET), `a secret reached the caller: ${text}`);
      c.check?.(attempt);
    });
  }
});
