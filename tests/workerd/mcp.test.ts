/**
 * The MCP endpoint in workerd: the bundled worker (its MCP code an extra module, loaded by the
 * first `/mcp` request) served by Miniflare on a loopback port, and the SDK's own client, in Node,
 * calling it over real HTTP. The cases are the ones Node and Deno pass (tests/support/mcp.ts).
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Miniflare } from "miniflare";
import { listen } from "../../src/runtime/node-listen.ts";
import { mcpCases, type McpSetup, mcpSetup } from "../support/mcp.ts";
import { mcpInputCases } from "../support/mcp-input-cases.ts";
import { startWorker } from "./miniflare.ts";

describe("/mcp in workerd: the SDK's client over real HTTP", () => {
  let setup: McpSetup;
  let mf: Miniflare;
  let mcp: URL;

  before(async () => {
    setup = await mcpSetup(listen);
    // Quiet: the SDK's client drops the connection of the 405 its GET gets without reading the
    // answer, and workerd logs each such write as a broken pipe.
    mf = await startWorker(setup.env, { quiet: true });
    mcp = new URL("/mcp", await mf.ready);
  });
  after(async () => {
    await mf?.dispose();
    await setup?.close();
  });

  mcpCases(() => ({ mcp, setup }));
  mcpInputCases(() => ({ mcp, setup }));

  it("the MCP code is an extra module: without it uploaded, /mcp fails and searches still answer", async () => {
    const bare = await startWorker(setup.env, { quiet: true, withoutExtraModules: true });
    try {
      const base = await bare.ready;
      const search = await fetch(new URL("/v1/search?q=deadline&providers=workspace", base));
      assert.equal(search.status, 200);
      await search.body?.cancel();
      const res = await fetch(new URL("/mcp", base), { method: "POST", body: "{}" });
      assert.equal(res.status, 500);
      await res.body?.cancel();
    } finally {
      await bare.dispose();
    }
  });
});
