/**
 * The text block of an MCP tool's answer (src/http/mcp/mcp-text.ts), built from envelopes by hand:
 * a line per provider, failures and skips included; a snippet cut at a word to 200 characters;
 * an expand's evidence text itself; and the whole text stopped at MAX_MCP_TEXT_CHARS, saying so,
 * at a line's end. The cases over real HTTP are in tests/support/mcp.ts.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { cutSnippet, toolText } from "../src/http/mcp/mcp-text.ts";
import type { ToolEnvelope } from "../src/http/mcp/mcp-tool-calls.ts";
import { MAX_MCP_SNIPPET_CHARS, MAX_MCP_TEXT_CHARS } from "../src/protocol/limits.ts";

const HEADER = {
  version: 1,
  ok: true,
  exit_code: 0,
  status: "ok",
  code: "ok",
  retryable: false,
  action: "none",
  request_id: "r-1",
} as const;

function entry(rank: number, snippet: string) {
  return {
    rank,
    locator: `https://notes.example/${rank}`,
    title: `Page ${rank}`,
    snippet,
    published_at: null,
    scope: "notes",
    source_class: "note-candidate",
    evidence_state: "local-source-match",
    sensitivity: "public",
    found_by: ["notes", "specs"],
    found_in: [],
    best_rank: rank,
    score: 1 / rank,
  };
}

function search(merged: ReturnType<typeof entry>[]): ToolEnvelope {
  return {
    ...HEADER,
    command: "search",
    code: "partial",
    result: {
      query: "deadline",
      merged,
      attempts: [
        {
          provider: "notes",
          scope: "notes",
          source_class: "note-candidate",
          sensitivity: "public",
          outcome: "success",
          code: "ok",
          retryable: false,
          message: "",
          candidate_count: 1,
          latency_ms: 12,
          cost_micros: 0,
          warnings: [],
        },
        {
          provider: "slow",
          scope: "notes",
          source_class: "note-candidate",
          sensitivity: "public",
          outcome: "timeout",
          code: "timeout",
          retryable: true,
          message: "no answer in time",
          candidate_count: 0,
          latency_ms: 3000,
          cost_micros: 0,
          warnings: [],
          budget: "provider_timeout",
        },
      ],
      decision: {
        tier: null,
        providers: ["notes", "slow"],
        trimmed: [],
        skipped: [{ provider: "resting", reason: "disabled" }],
      },
      coverage: "degraded",
      usage: { cost_micros: 0 },
      latency_ms: { total: 3001, providers: { notes: 12, slow: 3000 } },
      warnings: [],
    },
  } as unknown as ToolEnvelope;
}

describe("an MCP tool's text", () => {
  it("a search: a line per provider, failures and skips included, then each result in four lines", () => {
    const text = toolText(search([entry(1, "A deadline is absolute.")]));
    assert.equal(
      text,
      [
        "search: partial (action none)",
        '"deadline": 1 result, coverage degraded',
        "provider notes: 1 result in 12 ms",
        "provider slow: timeout (timeout) after 3000 ms",
        "provider resting: skipped (disabled)",
        "",
        "1. Page 1",
        "   https://notes.example/1",
        "   found by notes, specs",
        "   A deadline is absolute.",
      ].join("\n"),
    );
  });

  it("a snippet is one line of at most 200 characters, cut at a word with an ellipsis", () => {
    const long = `${"deadline\n budget ".repeat(30)}end`;
    const cut = cutSnippet(long);
    assert.ok(cut.length <= MAX_MCP_SNIPPET_CHARS, `${cut.length}`);
    assert.match(cut, /^deadline budget deadline .* (deadline|budget)…$/);
    assert.equal(cutSnippet("  short\n\tsnippet "), "short snippet");
  });

  it("stops before MAX_MCP_TEXT_CHARS at a line's end, saying so", () => {
    const many = Array.from({ length: 100 }, (_, i) => entry(i + 1, "x ".repeat(150)));
    const text = toolText(search(many));
    assert.ok(text.length <= MAX_MCP_TEXT_CHARS, `${text.length}`);
    assert.match(
      text,
      new RegExp(
        `\\n\\[cut at ${MAX_MCP_TEXT_CHARS} characters of \\d+: structuredContent holds the whole result\\]$`,
      ),
    );
    const before = text.slice(0, text.lastIndexOf("\n[cut at"));
    assert.ok(before.includes("\n1. Page 1\n") && !before.includes("\n100. Page 100\n"));
  });

  it("an expand carries the evidence text, not only its length", () => {
    const text = toolText({
      ...HEADER,
      command: "expand",
      result: {
        provider: "notes",
        evidence: {
          locator: "https://notes.example/1",
          title: "Page 1",
          text: "The whole text of the page.",
          content_type: "text/plain",
          retrieved_at: "2026-01-01T00:00:00.000Z",
          truncated: false,
        },
      },
    } as ToolEnvelope);
    assert.equal(
      text,
      "expand: ok (action none)\nPage 1\nlocator: https://notes.example/1 (from notes, text/plain)\n\nThe whole text of the page.",
    );
  });

  it("a refusal: the code and action, then the problem naming its field", () => {
    const text = toolText({
      ...HEADER,
      ok: false,
      exit_code: 2,
      status: "usage_error",
      code: "limit_out_of_range",
      action: "fix_input",
      command: "search",
      error: { message: "limit must be 1 to 100", field: "limit" },
    } as ToolEnvelope);
    assert.equal(
      text,
      "search: limit_out_of_range (action fix_input)\nlimit must be 1 to 100 [field limit]",
    );
  });
});
