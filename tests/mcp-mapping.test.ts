/**
 * The MCP mapping's pure parts (src/protocol/mcp-mapping.ts): paths, templates, argument filling
 * and the SSE reader, each against the cases that would break a search silently.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  atPath,
  fieldText,
  fillArguments,
  mappingProblems,
  placeholders,
} from "../src/protocol/mcp-mapping.ts";
import { sseMessages } from "../src/transport/mcp-sse.ts";

describe("MCP mapping", () => {
  const result = {
    name: "Ada",
    tags: ["a", "b"],
    n: 3,
    nested: { list: [{ url: "https://x.example/0" }] },
    bad: [{ not: "text" }],
  };

  it("a dotted path walks objects and indexes lists by number, never the prototype", () => {
    assert.equal(atPath(result, "nested.list.0.url"), "https://x.example/0");
    assert.equal(atPath(result, "nested.list.x"), undefined);
    assert.equal(atPath(result, "nested.list.1.url"), undefined);
    assert.equal(atPath(result, "constructor"), undefined);
    assert.equal(atPath(result, "name.length"), undefined);
  });

  it("a field's text: a path, a template, a list joined with a space, null when missing or not text", () => {
    assert.equal(fieldText(result, "name"), "Ada");
    assert.equal(fieldText(result, "tags"), "a b");
    assert.equal(fieldText(result, "n"), "3");
    assert.equal(fieldText(result, "memory://{name}/{n}"), "memory://Ada/3");
    assert.equal(fieldText(result, "memory://{nme}"), null);
    assert.equal(fieldText(result, "bad"), null);
    assert.equal(fieldText(result, "nested"), null);
  });

  it("arguments: exactly {limit} is a number, {query} a string, and {query} fills inside strings", () => {
    const filled = fillArguments(
      {
        q: "{query}",
        n: "{limit}",
        s: "site:x {query} {query}",
        deep: [{ k: "{limit}" }],
        t: true,
      },
      { query: "deadline", limit: 5 },
    );
    assert.deepEqual(filled, {
      q: "deadline",
      n: 5,
      s: "site:x deadline deadline",
      deep: [{ k: 5 }],
      t: true,
    });
  });

  it("braces that do not pair are no template", () => {
    assert.equal(placeholders("a{b"), null);
    assert.equal(placeholders("a}b"), null);
    assert.deepEqual(placeholders("{a}-{b.c}"), ["a", "b.c"]);
  });

  it("a sound mapping has no problems", () => {
    assert.deepEqual(
      mappingProblems({
        tool: "t",
        arguments: { q: "{query}" },
        results: "a.b",
        fields: { title: "t", locator: "x://{id}", snippet: "s" },
      }),
      [],
    );
  });

  it("SSE: every event's data, CRLF or LF, multi-line data joined, comments and ids ignored", () => {
    const text = ': comment\r\nid: 1\r\nevent: message\r\ndata: {"a":1}\r\n\r\n' +
      'data: {"b":\ndata: 2}\n\ndata: not json\n\n';
    assert.deepEqual(sseMessages(text), [{ a: 1 }, { b: 2 }]);
  });
});
