/**
 * The MCP endpoint on Node and on Deno, each serving the gateway as its runtime entry does (the
 * shared launcher over node-listen or Deno.serve), called over real HTTP by the SDK's own client.
 * The same cases run in workerd (tests/workerd/mcp.test.ts).
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { launch, type Launched } from "../src/runtime/launch.ts";
import { listen as nodeListen } from "../src/runtime/node-listen.ts";
import { nodePorts } from "../src/runtime/node-fetch.ts";

import { createGateway } from "../src/http/mod.ts";
import { ConfigError } from "../src/protocol/config-error.ts";
import { assertEnvelope, gateway, manifestOf, settingsFor } from "./support/gateway.ts";
import {
  assertToolOutput,
  connect,
  INITIALIZE,
  mcpCases,
  type McpSetup,
  mcpSetup,
} from "./support/mcp.ts";
import { mcpInputCases } from "./support/mcp-input-cases.ts";
import { startServer, type TestServer } from "./support/servers.ts";
import { readSettings } from "../src/config/settings.ts";
import { until } from "./support/until.ts";
import { isDeno, runtimeListen } from "./support/runtime-listen.ts";

const listen = runtimeListen;

describe(`/mcp on ${isDeno ? "Deno" : "Node"}: the SDK's client over real HTTP`, () => {
  let setup: McpSetup;
  let gateway: Launched;
  let mcp: URL;

  before(async () => {
    setup = await mcpSetup(listen);
    gateway = await launch(
      readSettings({ ...setup.env, PORT: "0" }),
      listen,
      isDeno ? undefined : nodePorts(),
    );
    mcp = new URL("/mcp", gateway.url);
  });
  after(async () => {
    await gateway?.close();
    await setup?.close();
  });

  mcpCases(() => ({ mcp, setup }));
  mcpInputCases(() => ({ mcp, setup }));
});

describe("/mcp: a caller that goes away cancels the provider calls", () => {
  let hanging: TestServer;
  let closed = 0;
  let served: { port: number; close: () => Promise<void> };

  before(async () => {
    hanging = await startServer((req) => {
      req.socket.on("close", () => closed++);
    });
    const app = gateway([{ name: "hang", endpoint: hanging.url, timeout_seconds: 30 }]);
    served = await listen(app.fetch, "127.0.0.1", 0);
  });
  after(async () => {
    await served?.close();
    await hanging?.close();
  });

  for (const [how, meta] of [["JSON", {}], ["SSE", { _meta: { progressToken: 1 } }]] as const) {
    it(`answering in ${how}: the provider sees its socket closed`, async () => {
      const before = closed;
      const asked = hanging.requests.length;
      const leaving = new AbortController();
      const mcp = new URL(`http://127.0.0.1:${served.port}/mcp`);
      const call = fetch(mcp, {
        method: "POST",
        signal: leaving.signal,
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "search", arguments: { query: `leaving ${how}` }, ...meta },
        }),
      }).then((res) => res.text()).catch((error: Error) => error.name);
      await until(() => hanging.requests.length === asked + 1, "the provider to be asked");
      leaving.abort();
      assert.equal(await call, "AbortError");
      await until(() => closed === before + 1, "the provider's socket to close");
    });
  }
});

describe("/mcp: a search shed for load", () => {
  let hanging: TestServer;
  let served: { port: number; close: () => Promise<void> };

  before(async () => {
    hanging = await startServer(() => {});
    const app = gateway([{ name: "hang", endpoint: hanging.url, timeout_seconds: 30 }], {
      settings: { maxInflight: 1 },
    });
    served = await listen(app.fetch, "127.0.0.1", 0);
  });
  after(async () => {
    await served?.close();
    await hanging?.close();
  });

  it("is isError with code overloaded, action retry and retry_after_ms", async () => {
    const mcp = new URL(`http://127.0.0.1:${served.port}/mcp`);
    const holder = await connect(mcp);
    const shed = await connect(mcp);
    const leaving = new AbortController();
    try {
      const held = holder.callTool(
        { name: "search", arguments: { query: "holds the one slot" } },
        undefined,
        { signal: leaving.signal },
      ).catch(() => null);
      await until(() => hanging.requests.length === 1, "the first search to reach its provider");
      const result = await shed.callTool({ name: "search", arguments: { query: "another" } });
      assert.equal(result.isError, true);
      const out = assertToolOutput("search", result.structuredContent);
      assert.deepEqual([out.code, out.action, out.retry_after_ms], ["overloaded", "retry", 1000]);
      leaving.abort();
      await held;
    } finally {
      await holder.close();
      await shed.close();
    }
  });
});

describe("/mcp's Origin rule and TRACEFETCH_MCP_ORIGINS", () => {
  const manifest = manifestOf([{ name: "notes", endpoint: "https://notes.example/search" }]);
  const initialize = (app: ReturnType<typeof createGateway>, origin: string) =>
    app.request("/mcp", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        origin,
      },
      body: JSON.stringify(INITIALIZE),
    });

  it("loopback origins are refused unless loopback is allowed (a development setup)", async () => {
    const production = createGateway(settingsFor(manifest));
    const res = await initialize(production, "http://localhost:3000");
    assert.equal(res.status, 403);
    assert.equal(assertEnvelope(await res.json()).code, "forbidden");
    const dev = createGateway(settingsFor(manifest, {}, { allowLoopback: true }));
    for (const origin of ["http://localhost:3000", "http://127.0.0.1:8080", "http://[::1]:9"]) {
      const ok = await initialize(dev, origin);
      assert.equal(ok.status, 200, origin);
      await ok.body?.cancel();
    }
    // A host that merely starts like a loopback one is not one.
    assert.equal((await initialize(dev, "http://localhost.rebound.example")).status, 403);
  });

  it("the gateway's own host is not implied: under DNS rebinding it is the hostile page's", async () => {
    const app = createGateway(settingsFor(manifest));
    const res = await app.request("http://gateway.example/mcp", {
      method: "POST",
      headers: { origin: "http://gateway.example", "content-type": "application/json" },
      body: "{}",
    });
    assert.equal(res.status, 403);
    await res.body?.cancel();
  });

  it("TRACEFETCH_MCP_ORIGINS lists origins, normalised as browsers send them; anything else stops the start", async () => {
    assert.deepEqual(
      readSettings({
        TRACEFETCH_MCP_ORIGINS:
          " https://App.example , https://b.example:8443/,http://c.example:80 ",
      }).env.mcpOrigins,
      ["https://app.example", "https://b.example:8443", "http://c.example"],
    );
    assert.deepEqual(readSettings({ TRACEFETCH_MCP_ORIGINS: "" }).env.mcpOrigins, []);
    for (
      const value of [
        "*",
        "app.example",
        "https://a.example/path",
        "ftp://a.example",
        "https://a.example?x",
      ]
    ) {
      assert.throws(
        () => readSettings({ TRACEFETCH_MCP_ORIGINS: value }),
        (error: unknown) =>
          error instanceof ConfigError &&
          error.message.startsWith("TRACEFETCH_MCP_ORIGINS must list origins") &&
          error.message.endsWith(`got ${JSON.stringify(value)}`),
        value,
      );
    }
    const app = createGateway(
      settingsFor(manifest, { TRACEFETCH_MCP_ORIGINS: "https://App.example" }),
    );
    const res = await initialize(app, "https://app.example");
    assert.equal(res.status, 200);
    await res.body?.cancel();
  });

  it("with TRACEFETCH_REQUIRE_AUTH, /mcp needs a token like every route", async () => {
    const app = createGateway(settingsFor(manifest, {
      TRACEFETCH_AUTH_SECRET: "s".repeat(32),
      TRACEFETCH_AUTH_ISSUER: "https://issuer.example",
      TRACEFETCH_AUTH_AUDIENCE: "tracefetch-test",
      TRACEFETCH_REQUIRE_AUTH: "on",
    }));
    const res = await app.request("/mcp", { method: "POST", body: "{}" });
    assert.equal(res.status, 401);
    assert.equal(res.headers.get("www-authenticate"), 'Bearer realm="tracefetch"');
    assert.equal(assertEnvelope(await res.json()).code, "unauthorized");
  });
});

describe(
  "docs/mcp.md's client snippet",
  { skip: isDeno ? "Node only: it runs with node" : false },
  () => {
    let gateway: Launched;
    before(async () => {
      // As `npm start` runs: the embedded default, no keys.
      gateway = await launch(
        readSettings({ PORT: "0", HOST: "127.0.0.1" }),
        nodeListen,
        nodePorts(),
      );
    });
    after(async () => {
      await gateway?.close();
    });

    it("run as written with TRACEFETCH_TOKEN unset, connects anonymously, lists the tools and searches", async () => {
      const doc = readFileSync(new URL("../docs/mcp.md", import.meta.url), "utf8");
      const snippet = /```js\n([\s\S]*?)```/.exec(doc)?.[1];
      assert.ok(snippet, "docs/mcp.md has a js block");
      assert.ok(snippet.includes("http://127.0.0.1:8787/mcp"));
      const { TRACEFETCH_TOKEN: _unset, ...env } = process.env;
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ["--input-type=module", "-e", snippet.replaceAll("http://127.0.0.1:8787", gateway.url)],
        { cwd: new URL("../", import.meta.url), env, timeout: 30_000 },
      );
      assert.match(stdout, /^tools: search, expand, fetch, verify, providers, status\n/);
      assert.match(stdout, /\nsearch: ok \(action none\)\n"deadline": 5 results/);
      assert.match(stdout, /\nok: true\n$/);
    });
  },
);
