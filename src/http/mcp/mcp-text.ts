/**
 * A tool result's text content, written for the model that reads it (docs/mcp.md): the code and
 * action, the problem when there is one, then the result as lines. For a search: a line per
 * provider, then per result its rank, title and locator, who found it, and its snippet cut to
 * MAX_MCP_SNIPPET_CHARS. The envelope itself is `structuredContent`; the text never repeats it as
 * JSON, which would double what a client that forwards both puts into the model's context. The
 * text stops at MAX_MCP_TEXT_CHARS with a line saying so.
 */
import type { MergedEntry } from "../../protocol/envelope-schema.ts";
import { MAX_MCP_SNIPPET_CHARS, MAX_MCP_TEXT_CHARS } from "../../protocol/limits.ts";
import type { SearchToolResult } from "../../protocol/mcp-tools.ts";
import {
  evidenceText,
  type FetchResult,
  type VerifyResult,
} from "../../protocol/evidence-schema.ts";
import { MAX_MCP_FETCH_TEXT_CHARS } from "../../protocol/evidence-route-limits.ts";
import type { ToolEnvelope } from "./mcp-tool-calls.ts";

export function toolText(output: ToolEnvelope): string {
  const lines = [`${output.command}: ${output.code} (action ${output.action})`];
  if (output.error) {
    lines.push(
      output.error.field === undefined
        ? output.error.message
        : `${output.error.message} [field ${output.error.field}]`,
    );
  }
  if (output.retry_after_ms !== undefined) lines.push(`retry after ${output.retry_after_ms} ms`);
  const result = output.result;
  if (result !== undefined) lines.push(...resultLines(result));
  return bounded(lines);
}

function resultLines(result: NonNullable<ToolEnvelope["result"]>): string[] {
  if ("attempts" in result) return searchLines(result);
  if ("receipt" in result) return fetchLines(result);
  if ("verdict" in result) return verifyLines(result);
  if ("evidence" in result) {
    const { evidence } = result;
    return [
      `${evidence.title}`,
      `locator: ${evidence.locator} (from ${result.provider}, ${evidence.content_type}${
        evidence.truncated ? ", truncated" : ""
      })`,
      "",
      evidence.text,
    ];
  }
  if ("tiers" in result) {
    return [
      ...result.providers.map((p) =>
        `provider ${p.name}: scope ${p.scope}, ${p.source_class}, ${p.sensitivity}`
      ),
      `tiers: ${Object.keys(result.tiers).join(", ") || "none"}; default ${
        result.default_tier ?? "none"
      }`,
    ];
  }
  if ("searches_in_flight" in result) {
    return [
      `${result.service} ${result.version}; ${result.searches_in_flight} of ${result.max_inflight} searches in flight`,
      ...result.providers.map((p) =>
        `provider ${p.name}: ${p.state}${p.until === undefined ? "" : ` until ${p.until}`}`
      ),
    ];
  }
  return [];
}

/**
 * A fetched page: where it came from, the passages for its query first when it asked one, then its
 * markdown, cut at MAX_MCP_FETCH_TEXT_CHARS code points with a line saying so (structuredContent
 * holds all of it, with the receipt).
 */
function fetchLines(result: FetchResult): string[] {
  const { evidence } = result;
  const chars = Array.from(evidenceText(evidence));
  const shown = chars.slice(0, MAX_MCP_FETCH_TEXT_CHARS).join("");
  const cut = chars.length > MAX_MCP_FETCH_TEXT_CHARS
    ? [
      "",
      `[cut at ${MAX_MCP_FETCH_TEXT_CHARS} of ${chars.length} characters: structuredContent.result.evidence.${
        "markdown" in evidence ? "markdown" : "text"
      } holds them all]`,
    ]
    : [];
  return [
    evidence.title ?? "(untitled)",
    `${evidence.final_url} (${evidence.status_code}, ${evidence.content_type}, ${evidence.route}${
      evidence.truncated ? ", truncated" : ""
    }${result.cached ? `, cached ${result.age_ms ?? 0} ms ago` : ""})`,
    `markdown_sha256 ${evidence.markdown_sha256}; ${
      result.receipt === null ? "unsigned" : "signed receipt in structuredContent.result.receipt"
    }`,
    ...result.warnings.map((w) => `warning: ${w}`),
    ...passageLines(evidence.passages),
    "",
    shown,
    ...cut,
  ];
}

/** The passages a query found, each under a line naming its lines and score. */
function passageLines(passages: FetchResult["evidence"]["passages"]): string[] {
  if (passages === undefined) return [];
  if (passages.length === 0) return ["", "passages: no paragraph holds a word of the query"];
  return [
    "",
    `passages (${passages.length}, best first):`,
    ...passages.flatMap((p, i) => [
      "",
      `[${i + 1}] lines ${p.line_start}-${p.line_end}, score ${p.score}`,
      p.text,
    ]),
    "",
    "page:",
  ];
}

/** A verify: the verdict, why, and where a quote was found. */
function verifyLines(result: VerifyResult): string[] {
  const lines = [`verdict: ${result.verdict}`, result.reason];
  const found = result.quote;
  if (found !== undefined) {
    lines.push(
      `quote at lines ${found.line_start}-${found.line_end}${
        found.anchor === null ? "" : ` under "${found.anchor.heading}" (#${found.anchor.id})`
      }`,
    );
  }
  return lines;
}

/** A line per provider (those contacted, then those skipped or trimmed), then the results. */
function searchLines(result: SearchToolResult): string[] {
  const providers = result.attempts.map((a) => {
    if (a.outcome === "success") {
      return `provider ${a.provider}: ${a.candidate_count} result${
        a.candidate_count === 1 ? "" : "s"
      } in ${a.latency_ms} ms`;
    }
    return `provider ${a.provider}: ${a.outcome} (${a.code}) after ${a.latency_ms} ms`;
  });
  for (const s of result.decision.skipped) {
    providers.push(`provider ${s.provider}: skipped (${s.reason})`);
  }
  for (const t of result.decision.trimmed) {
    providers.push(`provider ${t.provider}: not contacted (${t.reason})`);
  }
  const count = result.merged.length;
  return [
    `"${result.query}": ${count} result${count === 1 ? "" : "s"}, coverage ${result.coverage}`,
    ...providers,
    ...result.merged.flatMap(entryLines),
  ];
}

function entryLines(entry: MergedEntry): string[] {
  const lines = [
    "",
    `${entry.rank}. ${entry.title}`,
    `   ${entry.locator}`,
    `   found by ${entry.found_by.join(", ")}`,
  ];
  const snippet = cutSnippet(entry.snippet);
  if (snippet !== "") lines.push(`   ${snippet}`);
  return lines;
}

/** One line, at most MAX_MCP_SNIPPET_CHARS, cut at a word with an ellipsis when cut. */
export function cutSnippet(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  if (flat.length <= MAX_MCP_SNIPPET_CHARS) return flat;
  const cut = flat.slice(0, MAX_MCP_SNIPPET_CHARS - 1);
  const space = cut.lastIndexOf(" ");
  return `${(space > MAX_MCP_SNIPPET_CHARS / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/** The lines joined, stopping before MAX_MCP_TEXT_CHARS with a line that says so. */
function bounded(lines: string[]): string {
  const text = lines.join("\n");
  if (text.length <= MAX_MCP_TEXT_CHARS) return text;
  const note = `\n[cut at ${MAX_MCP_TEXT_CHARS} characters of ${text.length}: ` +
    "structuredContent holds the whole result]";
  const keep = text.slice(0, MAX_MCP_TEXT_CHARS - note.length);
  const end = keep.lastIndexOf("\n");
  return `${end > 0 ? keep.slice(0, end) : keep}${note}`;
}
