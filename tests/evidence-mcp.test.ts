/**
 * The MCP tools fetch and verify over real HTTP with the SDK's client: tools/list names both; a
 * long page's text block is cut at 4,000 characters with a line saying so while structuredContent
 * holds the whole envelope; verify answers the verdict a route would.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { listen } from "../src/runtime/node-listen.ts";
import { MAX_MCP_FETCH_TEXT_CHARS } from "../src/protocol/mod.ts";
import { assertToolOutput, connect } from "./support/mcp.ts";
import { evidenceGateway } from "./support/evidence-gateway.ts";
import { listen as listenSite, type Listener } from "./support/fetch-fixture.ts";

const LONG_PAGE = `<!doctype html><html><head><title>Harbour log</title></head><body>
<nav>Menu</nav><article><h1>Harbour log</h1>${
  Array.from({ length: 60 }, (_, i) =>
    `<p>Entry ${
      i + 1
    }: the tide rose over the harbour wall and fell again before the evening bell rang.</p>`).join(
      "\n",
    )
}</article><footer>Footer</footer></body></html>`;

describe("MCP fetch and verify", () => {
  let site: Listener;
  let gw: Awaited<ReturnType<typeof evidenceGateway>>;
  let served: Awaited<ReturnType<typeof listen>>;
  let mcp: URL;
  before(async () => {
    site = await listenSite("127.0.0.1", 0, {
      "/log": (_req, res) => {
        res.writeHead(200, { "content-type": "text/html" });
        res.end(LONG_PAGE);
      },
    });
    gw = await evidenceGateway();
    served = await listen(gw.app.fetch);
    mcp = new URL(`http://127.0.0.1:${served.port}/mcp`);
  });
  after(async () => {
    await served.close();
    await gw.close();
    await site.close();
  });

  it("tools/list names fetch and verify", async () => {
    const client = await connect(mcp);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      assert.ok(names.includes("fetch") && names.includes("verify"), names.join(", "));
    } finally {
      await client.close();
    }
  });

  it("fetch: the text is cut at 4,000 characters with a line saying so; structuredContent holds it all, and verify checks it", async () => {
    const client = await connect(mcp);
    try {
      const url = `http://127.0.0.1:${site.port}/log`;
      const result = await client.callTool({ name: "fetch", arguments: { url } });
      assert.notEqual(result.isError, true, JSON.stringify(result).slice(0, 500));
      const out = assertToolOutput("fetch", result.structuredContent);
      const markdown: string = out.result.evidence.markdown;
      assert.ok(markdown.length > MAX_MCP_FETCH_TEXT_CHARS, `${markdown.length} characters`);
      const text = (result.content as Array<{ type: string; text: string }>)[0]?.text ?? "";
      assert.match(text, /\[cut at 4000 of \d+ characters: structuredContent/);
      assert.ok(text.includes(markdown.slice(0, 500)));
      assert.ok(!text.includes(markdown.slice(-200)));

      const verdict = await client.callTool({
        name: "verify",
        arguments: { receipt: out.result.receipt, markdown, quote: "Entry 42: the tide rose" },
      });
      const checked = assertToolOutput("verify", verdict.structuredContent);
      assert.deepEqual([checked.ok, checked.result.verdict], [true, "verified"]);
      const verdictText = (verdict.content as Array<{ text: string }>)[0]?.text ?? "";
      assert.match(verdictText, /verdict: verified/);
    } finally {
      await client.close();
    }
  });
});
