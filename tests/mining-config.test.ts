/**
 * The trace sink configurations a gateway refuses at start, each with one line naming what to
 * set, and the Node and Deno entries opening the trace file at start.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError } from "../src/protocol/config-error.ts";
import type { Ports } from "../src/config/mod.ts";
import { launch } from "../src/runtime/launch.ts";
import { listen } from "../src/runtime/node-listen.ts";
import { answer, startServer, type TestServer } from "./support/servers.ts";
import { assertEnvelope } from "./support/gateway.ts";
import {
  eventually,
  notesGateway,
  notesManifest,
  tracesOfLines,
} from "./support/mining-fixture.ts";
import { readSettings } from "../src/config/settings.ts";

const SECRET = "s".repeat(32);
const CONFIRMED = { TRACEFETCH_MINING_CONFIRMED: "1", TRACEFETCH_TRACE_SECRET: SECRET };
const tracesIn = (path: string) => readFile(path, "utf8").then(tracesOfLines, () => []);

describe("mining configuration", () => {
  let provider: TestServer;
  let dir: string;
  before(async () => {
    provider = await startServer(
      answer("notes", "notes", [{ title: "N", locator: "https://n.example/" }]),
    );
    dir = await mkdtemp(join(tmpdir(), "tracefetch-mining-config-"));
  });
  after(async () => {
    await provider?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const notes = () => notesManifest(provider.url);
  const gatewayWith = (env: Record<string, string>, config: Ports = {}) =>
    notesGateway(provider.url, env, config);

  describe("configurations refused at start, each naming what to set", () => {
    const refusals: Array<[string, Record<string, string>, RegExp, Ports?]> = [
      [
        "a sink without TRACEFETCH_TRACE_SECRET",
        { TRACEFETCH_TRACE_WEBHOOK: "https://c.example/t" },
        /TRACEFETCH_TRACE_WEBHOOK needs TRACEFETCH_TRACE_SECRET .*or TRACEFETCH_TRACE_RAW_QUERIES=1/,
      ],
      [
        "a secret under 32 bytes",
        { TRACEFETCH_TRACE_SECRET: "short" },
        /TRACEFETCH_TRACE_SECRET must be at least 32 bytes \(it has 5\)/,
      ],
      [
        "a webhook without TRACEFETCH_SIGNING_JWK",
        { TRACEFETCH_TRACE_WEBHOOK: "https://c.example/t", TRACEFETCH_TRACE_SECRET: SECRET },
        /TRACEFETCH_TRACE_WEBHOOK needs TRACEFETCH_SIGNING_JWK/,
      ],
      [
        "a webhook over plain http to a host that is not loopback",
        { TRACEFETCH_TRACE_WEBHOOK: "http://c.example/t", TRACEFETCH_TRACE_SECRET: SECRET },
        /TRACEFETCH_TRACE_WEBHOOK must use https:/,
      ],
      [
        "two sinks",
        {
          TRACEFETCH_TRACE_WEBHOOK: "https://c.example/t",
          TRACEFETCH_TRACE_QUEUE: "TRACES",
          TRACEFETCH_TRACE_SECRET: SECRET,
        },
        /set one trace sink, not TRACEFETCH_TRACE_WEBHOOK and TRACEFETCH_TRACE_QUEUE/,
      ],
      [
        "a file the runtime did not open",
        { TRACEFETCH_TRACE_FILE: "t.jsonl", TRACEFETCH_TRACE_SECRET: SECRET },
        /TRACEFETCH_TRACE_FILE is set, but this runtime writes no files/,
      ],
      [
        "a Queue outside a Worker",
        { TRACEFETCH_TRACE_QUEUE: "TRACES", TRACEFETCH_TRACE_SECRET: SECRET },
        /TRACEFETCH_TRACE_QUEUE names a Workers Queue binding, which only a Worker has/,
      ],
    ];
    for (const [what, env, message] of refusals) {
      it(what, () => {
        assert.throws(
          () => gatewayWith(env),
          (error: unknown) => error instanceof ConfigError && message.test(error.message),
        );
      });
    }

    it("raw queries opted in, a sink needs no secret; then no HMAC is written", async () => {
      const written: string[] = [];
      const app = gatewayWith({
        TRACEFETCH_TRACE_FILE: "t.jsonl",
        TRACEFETCH_TRACE_RAW_QUERIES: "1",
        TRACEFETCH_MINING_CONFIRMED: "1",
      }, {
        traceSink: {
          kind: "file",
          write: (entries) => {
            written.push(...entries.map((e) => e.json));
            return Promise.resolve();
          },
        },
      });
      await app.request("/v1/search?q=plain%20text");
      const [json] = await eventually(
        "the trace",
        () => Promise.resolve(written),
        (w) => w.length === 1,
      );
      const trace = JSON.parse(json as string);
      assert.deepEqual(trace.query, { text: "plain text" });
      assert.doesNotMatch(json as string, /hmac/);
    });

    it("confirming without a sink starts, with a warning that nothing is recorded", () => {
      const warnings: string[] = [];
      gatewayWith({ TRACEFETCH_MINING_CONFIRMED: "1" }, { onWarning: (l) => warnings.push(l) });
      assert.match(warnings.join("\n"), /TRACEFETCH_MINING_CONFIRMED set, but no trace sink is/);
    });
  });

  describe("the Node and Deno entries open the trace file at start", () => {
    it("a path that cannot be written stops the start, naming TRACEFETCH_TRACE_FILE", async () => {
      // Under a regular file, so no privilege makes it writable.
      const file = join(dir, "not-a-folder");
      writeFileSync(file, "");
      await assert.rejects(
        launch(
          readSettings({
            TRACEFETCH_MANIFEST: JSON.stringify(notes()),
            TRACEFETCH_ALLOW_LOOPBACK: "1",
            TRACEFETCH_TRACE_FILE: join(file, "traces.jsonl"),
            TRACEFETCH_TRACE_SECRET: SECRET,
            PORT: "0",
          }),
          listen,
        ),
        (error: unknown) =>
          error instanceof ConfigError &&
          /^TRACEFETCH_TRACE_FILE: cannot write ".*traces\.jsonl" \(ENOTDIR\)$/.test(error.message),
      );
    });

    it("a writable path records each search, one JSON line each", async () => {
      const path = join(dir, "launched.jsonl");
      const running = await launch(
        readSettings({
          TRACEFETCH_MANIFEST: JSON.stringify(notes()),
          TRACEFETCH_ALLOW_LOOPBACK: "1",
          TRACEFETCH_DESCRIBE_PROVIDERS: "0",
          TRACEFETCH_TRACE_FILE: path,
          ...CONFIRMED,
          PORT: "0",
        }),
        listen,
      );
      try {
        const res = await fetch(`${running.url}/v1/search?q=launched`);
        const body = assertEnvelope(await res.json());
        const traces = await eventually("the trace", () => tracesIn(path), (t) => t.length === 1);
        assert.equal(traces[0]?.request_id, body.request_id);
      } finally {
        await running.close();
      }
    });
  });
});
