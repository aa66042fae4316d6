/**
 * `tracefetch search -`: a request on stdin is held to the gateway's rules (1 MiB, strict UTF-8
 * with a BOM dropped, one JSON object, the strict schema) and refused before anything is sent.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createGateway } from "../src/http/mod.ts";
import { listen, type Listening } from "../src/runtime/node-listen.ts";
import { MAX_REQUEST_BODY_BYTES } from "../src/protocol/limits.ts";
import { manifestOf, settingsFor } from "./support/gateway.ts";
import { answer, raw, startServer, type TestServer } from "./support/servers.ts";
import { runCli, runJson } from "./support/cli.ts";

const encoder = new TextEncoder();

/** What the CLI must refuse, and the code it refuses with. */
const REFUSED: Array<{ name: string; input: string | Uint8Array; code: string; field?: string }> = [
  { name: "text that is not JSON", input: "query: deadlines", code: "invalid_json" },
  { name: "two JSON objects", input: '{"query":"a"}{"query":"b"}', code: "invalid_json" },
  { name: "a JSON array", input: '[{"query":"a"}]', code: "invalid_json" },
  { name: "nothing at all", input: "", code: "invalid_json" },
  {
    name: "an unknown field",
    input: '{"query":"a","colour":"red"}',
    code: "unknown_field",
    field: "colour",
  },
  {
    name: "an explicit null",
    input: '{"query":"a","scope":null}',
    code: "null_field",
    field: "scope",
  },
  { name: "a blank query", input: '{"query":"  "}', code: "query_empty", field: "query" },
  {
    name: "a body over 1 MiB",
    input: `{"query":"${"a".repeat(MAX_REQUEST_BODY_BYTES)}"}`,
    code: "body_too_large",
  },
  {
    name: "bytes that are not UTF-8",
    input: Uint8Array.from([...encoder.encode('{"query":"caf'), 0xe9, ...encoder.encode('"}')]),
    code: "invalid_utf8",
  },
];

describe("tracefetch search - (the request on stdin)", { concurrency: true }, () => {
  let provider: TestServer;
  let gateway: Listening;
  let url: string;
  /** A gateway no refused request may reach. */
  let untouched: TestServer;

  before(async () => {
    provider = await startServer(
      answer("alpha", "alpha", [{ title: "Deadlines", locator: "https://alpha.example/1" }]),
    );
    gateway = await listen(
      createGateway(
        settingsFor(manifestOf([{ name: "alpha", endpoint: provider.url }]), {}, {
          allowLoopback: true,
        }),
      ).fetch,
    );
    url = `http://127.0.0.1:${gateway.port}`;
    untouched = await startServer(raw(500, "no request should arrive here"));
  });
  after(async () => {
    await gateway.close();
    await provider.close();
    await untouched.close();
  });

  it("a good request (with a BOM) is sent as given", async () => {
    const input = `\uFEFF${JSON.stringify({ query: "deadlines", limit: 3, view: "merged" })}`;
    const run = await runJson(["search", "-", "--gateway", url], { input });
    assert.equal(run.envelope.code, "ok");
    assert.equal(run.envelope.result.query, "deadlines");
    assert.equal(run.envelope.result.candidates, undefined, "view merged reached the gateway");
    assert.equal(run.envelope.result.merged.length, 1);
  });

  for (const c of REFUSED) {
    it(`${c.name} is refused with ${c.code}, exit 2, before anything is sent`, async () => {
      const run = await runJson(
        ["search", "-", "--gateway", `http://127.0.0.1:${untouched.port}`],
        {
          input: c.input,
        },
      );
      assert.equal(run.code, 2);
      assert.equal(run.envelope.code, c.code);
      assert.equal(run.envelope.action, "fix_input");
      if (c.field) assert.equal(run.envelope.error.field, c.field);
      assert.equal(untouched.requests.length, 0);
    });
  }

  it("request options cannot be combined with -", async () => {
    const run = await runJson(["search", "-", "--limit", "3", "--gateway", url], {
      input: '{"query":"a"}',
    });
    assert.equal(run.envelope.code, "invalid_field");
    assert.equal(run.envelope.error.field, "limit");
  });

  it("people see the refusal on stderr and nothing on stdout", async () => {
    const run = await runCli(["search", "-", "--gateway", `http://127.0.0.1:${untouched.port}`], {
      input: "{",
    });
    assert.equal(run.code, 2);
    assert.equal(run.stdout, "");
    assert.match(
      run.stderr,
      /^tracefetch search: stdin is not valid JSON \(invalid_json; next: fix_input\)\n$/,
    );
    assert.equal(untouched.requests.length, 0);
  });
});
