/**
 * Passages for a query (docs/envelope.md, "Passages"): `POST /v1/fetch` with `query` puts the
 * paragraph holding the query's terms first, each passage's lines being the lines of the returned
 * text; a cached page answers another query with that query's passages; `max_passages` bounds them
 * and needs a query; the MCP fetch tool's text shows the passages before the page.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { assertEnvelope } from "./support/gateway.ts";
import { evidenceGateway, startSite } from "./support/evidence-gateway.ts";
import { passagesOf } from "../src/evidence/page-passages.ts";
import { listen } from "../src/runtime/node-listen.ts";
import { assertToolOutput, connect } from "./support/mcp.ts";

type App = Awaited<ReturnType<typeof evidenceGateway>>["app"];

async function fetchPage(app: App, body: Record<string, unknown>) {
  const res = await app.request("/v1/fetch", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: assertEnvelope(await res.json()) };
}

describe("passagesOf ranks a text's paragraphs as the corpus engine ranks documents", () => {
  const text = [
    "# Harbour guide", // 1
    "", // 2
    "The harbour opens at dawn and the ferry leaves twice a day.", // 3
    "", // 4
    "## Moorings", // 5
    "", // 6
    "Visiting boats moor on the east pontoon.", // 7
    "Mooring fees are paid at the harbour office.", // 8
    "", // 9
    "Fishing boats unload at the north quay before noon.", // 10
  ].join("\n");

  it("the paragraph holding the query's terms comes first, with its own lines, stemmed words matching", () => {
    const passages = passagesOf(text, "where do visiting boats moor", 3);
    const first = passages[0];
    assert.ok(first !== undefined);
    assert.deepEqual([first.line_start, first.line_end], [7, 8]);
    assert.equal(first.text, text.split("\n").slice(6, 8).join("\n"));
    // "moor" matches "Mooring" through its stem; "boats" also matches the fishing paragraph, later.
    assert.deepEqual(passages.map((p) => p.line_start), [7, 10]);
    assert.ok(first.score > (passages[1]?.score ?? 0));
  });

  it("a lone heading is not a passage, no term is no passage, and max bounds the count", () => {
    assert.deepEqual(passagesOf(text, "moorings", 3).map((p) => p.line_start), [7]);
    assert.deepEqual(passagesOf(text, "the of and", 3), []);
    assert.deepEqual(passagesOf(text, "boats harbour", 1).length, 1);
  });
});

describe("fetch with a query over a loopback site", () => {
  let site: Awaited<ReturnType<typeof startSite>>;
  let gw: Awaited<ReturnType<typeof evidenceGateway>>;
  before(async () => {
    site = await startSite();
    gw = await evidenceGateway();
  });
  after(async () => {
    await gw.close();
    await site.close();
  });

  it("the paragraph holding the query's terms comes first; its lines are the markdown's", async () => {
    const { status, body } = await fetchPage(gw.app, {
      url: `${site.base}/article`,
      query: "what happens at the quarter moons",
    });
    assert.equal(status, 200, JSON.stringify(body));
    const { evidence } = body.result;
    const [first] = evidence.passages;
    assert.match(first.text, /^Neap tides come at the quarter moons/);
    const lines = evidence.markdown.split("\n").slice(first.line_start - 1, first.line_end);
    assert.equal(lines.join("\n"), first.text);
    assert.ok(evidence.passages.length <= 3);
  });

  it("a cached page answers another query with that query's passages, and none without a query", async () => {
    const url = `${site.base}/article`;
    const asked = () => site.requests.filter((r) => r.path === "/article").length;
    await fetchPage(gw.app, { url, query: "neap" });
    // The cache is written after the answer.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const before = asked();
    const spring = await fetchPage(gw.app, {
      url,
      query: "largest range full moon sun",
      max_passages: 1,
    });
    assert.equal(spring.body.result.cached, true);
    assert.equal(asked(), before);
    assert.equal(spring.body.result.evidence.passages.length, 1);
    assert.match(spring.body.result.evidence.passages[0].text, /^Spring tides come with/);
    const plain = await fetchPage(gw.app, { url });
    assert.equal(plain.body.result.cached, true);
    assert.equal("passages" in plain.body.result.evidence, false);
    const get = await gw.app.request(
      `/v1/fetch?url=${encodeURIComponent(url)}&query=quarter+moons&max_passages=2`,
    );
    const got = assertEnvelope(await get.json());
    assert.match(got.result.evidence.passages[0].text, /^Neap tides/);
  });

  it("max_passages is 1 to 10 and needs a query; a blank query is refused", async () => {
    const url = `${site.base}/article`;
    for (
      const ask of [
        { url, query: "tide", max_passages: 0 },
        { url, query: "tide", max_passages: 11 },
        { url, max_passages: 2 },
        { url, query: "   " },
      ]
    ) {
      const { status, body } = await fetchPage(gw.app, ask);
      assert.deepEqual([status, body.code], [400, "invalid_field"], JSON.stringify(ask));
    }
  });

  it("MCP fetch with a query shows the passages before the page", async () => {
    const served = await listen(gw.app.fetch);
    const client = await connect(new URL(`http://127.0.0.1:${served.port}/mcp`));
    try {
      const result = await client.callTool({
        name: "fetch",
        arguments: { url: `${site.base}/article`, query: "quarter moons" },
      });
      assertToolOutput("fetch", result.structuredContent);
      const text = (result.content as Array<{ text: string }>)[0]?.text ?? "";
      const passageAt = text.indexOf("Neap tides come at the quarter moons");
      const pageAt = text.indexOf("The moon pulls the sea toward it");
      assert.ok(text.includes("passages (") && passageAt !== -1, text);
      assert.ok(passageAt < pageAt, "the passage comes before the page");
    } finally {
      await client.close();
      await served.close();
    }
  });
});
