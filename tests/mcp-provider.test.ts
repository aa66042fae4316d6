/**
 * MCP servers as providers (`transport: "mcp"`), end to end with real processes on 127.0.0.1:
 * gateway A declares gateway B's `/mcp` search tool, the official server-memory behind supergateway,
 * and the official exa-mcp-server behind supergateway with no network. Then the mapping's failures:
 * a typo, a template naming a path a result lacks, and a tool the server lacks.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launch, type Launched } from "../src/runtime/launch.ts";
import { readSettings } from "../src/config/settings.ts";
import { gateway, manifestOf, search, settingsFor } from "./support/gateway.ts";
import {
  type Bridge,
  memoryFile,
  memoryMapping,
  missingBin,
  startBridge,
} from "./support/mcp-bridge.ts";
import { validateManifest } from "../src/protocol/validate-manifest.ts";
import { isDeno, runtimeListen } from "./support/runtime-listen.ts";

const listen = runtimeListen;

const missing = missingBin("supergateway", "mcp-server-memory", "exa-mcp-server");
if (missing !== null) console.log(`# skipped: node_modules/.bin/${missing} is not installed`);

/** B's search tool: its structuredContent is B's envelope, whose result holds the fused list. */
const gatewayMapping = {
  tool: "search",
  arguments: { query: "{query}", limit: "{limit}" },
  results: "result.merged",
  fields: { title: "title", locator: "locator", snippet: "snippet", published_at: "published_at" },
};
const exaMapping = {
  tool: "web_search_exa",
  arguments: { query: "{query}", numResults: "{limit}" },
  results: "results",
  fields: { title: "title", locator: "url", snippet: "text" },
};

describe(
  `MCP servers as providers on ${isDeno ? "Deno" : "Node"}`,
  { skip: missing !== null },
  () => {
    let b: Launched;
    let memory: Bridge;
    let exa: Bridge;
    let dir: string;

    before(async () => {
      dir = await mkdtemp(join(tmpdir(), "tracefetch-mcp-"));
      [b, memory, exa] = await Promise.all([
        launch(readSettings({ PORT: "0", TRACEFETCH_DESCRIBE_PROVIDERS: "off" }), listen),
        memoryFile(dir).then((file) =>
          startBridge("mcp-server-memory", { MEMORY_FILE_PATH: file })
        ),
        startBridge("exa-mcp-server", { EXA_API_KEY: "offline-test-key" }),
      ]);
    });
    after(async () => {
      await Promise.all([b?.close(), memory?.close(), exa?.close()]);
      await rm(dir, { recursive: true, force: true });
    });

    it("fuses B's and the memory server's results, and Exa's isError is a failed attempt: partial", async () => {
      const a = gateway([
        { name: "b", transport: "mcp", endpoint: new URL("/mcp", b.url).href, mcp: gatewayMapping },
        { name: "memory", transport: "mcp", endpoint: memory.url, mcp: memoryMapping },
        { name: "exa_mcp", transport: "mcp", endpoint: exa.url, mcp: exaMapping },
      ]);
      const { body } = await search(a, { q: "deadline", limit: "10" });
      assert.equal(body.code, "partial", JSON.stringify(body.result.candidates));
      const attempt = (name: string) =>
        body.result.candidates.find((x: { provider: string }) => x.provider === name);
      assert.equal(attempt("b").outcome, "success");
      assert.ok(attempt("b").candidate_count > 0, "B found something for deadline");
      assert.equal(attempt("memory").outcome, "success");
      assert.equal(attempt("memory").candidate_count, 1, "only the matching entity");
      assert.equal(attempt("exa_mcp").outcome, "search_failed");
      assert.equal(attempt("exa_mcp").code, "search_failed");
      assert.match(attempt("exa_mcp").message, /isError: .*web_search_exa/);
      const merged = body.result.merged as Array<Record<string, unknown>>;
      const entity = merged.find((m) => m.locator === "memory://Deadline budget");
      assert.ok(
        entity,
        `the entity's locator is templated from its name: ${JSON.stringify(merged)}`,
      );
      assert.equal(entity.title, "Deadline budget");
      assert.equal(entity.snippet, "a deadline bounds every provider call set per search");
      assert.deepEqual(entity.found_by, ["memory"]);
      assert.ok(
        merged.some((m) => (m.found_by as string[]).includes("b")),
        "B's results are fused",
      );
    });

    it("a template naming a path the results lack is a schema violation naming the field", async () => {
      const a = gateway([{
        name: "memory",
        transport: "mcp",
        endpoint: memory.url,
        mcp: { ...memoryMapping, fields: { ...memoryMapping.fields, locator: "memory://{nme}" } },
      }]);
      const { body } = await search(a, { q: "deadline" });
      const [attempt] = body.result.candidates;
      assert.equal(attempt.outcome, "provider_protocol_error");
      assert.equal(attempt.code, "schema_violation");
      assert.match(
        attempt.message,
        /fields\.locator \("memory:\/\/\{nme\}"\) names a path the result lacks/,
      );
    });

    it("a results path that is missing, or not a list, is a schema violation, never an empty success", async () => {
      for (
        const [results, said] of [["entites", /nothing at the results path "entites"/], [
          "entities.0",
          /holds an object, not a list/,
        ]] as const
      ) {
        const a = gateway([{
          name: "memory",
          transport: "mcp",
          endpoint: memory.url,
          mcp: { ...memoryMapping, results },
        }]);
        const { body } = await search(a, { q: "deadline" });
        const [attempt] = body.result.candidates;
        assert.equal(attempt.code, "schema_violation", results);
        assert.match(attempt.message, said);
      }
    });

    it("a tool the server lacks is adapter_unavailable, naming the tools it has", async () => {
      const a = gateway([{
        name: "memory",
        transport: "mcp",
        endpoint: memory.url,
        mcp: { ...memoryMapping, tool: "search_node" },
      }]);
      const { body } = await search(a, { q: "deadline" });
      const [attempt] = body.result.candidates;
      assert.equal(attempt.outcome, "adapter_unavailable");
      assert.equal(attempt.code, "adapter_unavailable");
      assert.match(attempt.message, /no tool "search_node"; it has: .*search_nodes/);
      assert.equal(body.code, "all_providers_failed");
    });
  },
);

describe("an MCP mapping is checked when the manifest loads", () => {
  const entry = (mcp: unknown) =>
    manifestOf([{ name: "memory", transport: "mcp", endpoint: "https://mcp.example/mcp", mcp }]);
  const issues = (mcp: unknown) => {
    const result = validateManifest(entry(mcp), { allowLoopback: false });
    assert.equal(result.ok, false);
    return result.ok ? [] : result.issues;
  };

  it('"reslts" is an unknown field with a did-you-mean, naming the provider', () => {
    const { results, ...rest } = memoryMapping;
    const issue = issues({ ...rest, reslts: results }).find((i) => i.field.endsWith("reslts"));
    assert.equal(issue?.provider, "memory");
    assert.equal(issue?.field, "providers.0.mcp.reslts");
    assert.match(issue?.message ?? "", /not a known field; did you mean "results"/);
  });

  it("a template naming no path, a {limit} inside a string and an unknown placeholder fail", () => {
    const found = issues({
      ...memoryMapping,
      arguments: { query: "site:docs {query}", n: "top {limit}", q2: "{qery}" },
      fields: { ...memoryMapping.fields, locator: "memory://{}", title: "{name" },
    });
    const at = Object.fromEntries(found.map((i) => [i.field, i.message]));
    assert.match(
      at["providers.0.mcp.fields.locator"] ?? "",
      /names \{\}, which is not a dotted path/,
    );
    assert.match(at["providers.0.mcp.fields.title"] ?? "", /unmatched/);
    assert.match(at["providers.0.mcp.arguments.n"] ?? "", /\{limit\} must be the whole string/);
    assert.match(at["providers.0.mcp.arguments.q2"] ?? "", /did you mean "query"/);
    assert.equal(at["providers.0.mcp.arguments.query"], undefined, "{query} may sit in a string");
  });

  it("transport mcp needs its block, the block needs transport mcp, and the URL policy holds", () => {
    const without = validateManifest(
      manifestOf([{ name: "m", transport: "mcp", endpoint: "https://mcp.example/mcp" }]),
      { allowLoopback: false },
    );
    assert.ok(!without.ok && without.issues.some((i) => i.field === "providers.0.mcp"));
    const stray = validateManifest(
      manifestOf([{ name: "m", endpoint: "https://mcp.example/mcp", mcp: memoryMapping }]),
      { allowLoopback: false },
    );
    assert.ok(!stray.ok && stray.issues.some((i) => i.field === "providers.0.mcp"));
    const loopback = validateManifest(
      manifestOf([{
        name: "m",
        transport: "mcp",
        endpoint: "http://127.0.0.1:9/mcp",
        mcp: memoryMapping,
      }]),
      { allowLoopback: false },
    );
    assert.ok(!loopback.ok && loopback.issues.some((i) => i.field === "providers.0.endpoint"));
    const ok = validateManifest(
      manifestOf([{
        name: "m",
        transport: "mcp",
        endpoint: "http://127.0.0.1:9/mcp",
        mcp: memoryMapping,
      }]),
      { allowLoopback: true },
    );
    assert.ok(ok.ok);
    assert.equal(ok.manifest.providers[0]?.transport, "mcp");
    assert.deepEqual(ok.manifest.providers[0]?.mcp?.arguments, { query: "{query}" });
  });

  it("the manifests docs/providers.md shows are valid", () => {
    const guide = readFileSync(new URL("../docs/providers.md", import.meta.url), "utf8");
    const blocks = [...guide.matchAll(/^```json example=(mcp-[\w-]+)\n([\s\S]*?)^```$/gm)];
    assert.equal(blocks.length, 2, "a gateway's /mcp and a vendor's server");
    for (const [, name, body] of blocks) {
      const result = validateManifest(JSON.parse(body as string), { allowLoopback: true });
      assert.ok(result.ok, `${name}: ${JSON.stringify(!result.ok && result.issues)}`);
      assert.ok(result.manifest.providers.every((p) => p.transport === "mcp"), name);
    }
  });

  it("settings refuse a bad mapping with the entry and field named", () => {
    assert.throws(
      () => settingsFor(entry({ ...memoryMapping, results: "entities..x" }), {}, {}),
      /provider "memory": providers\.0\.mcp\.results: must be a dotted path/,
    );
  });
});
