/**
 * A tool result's text content, as the MCP spec advises for clients that read no structured
 * content: a few readable lines first, then the structured content as JSON, cut at
 * MAX_MCP_TEXT_JSON_CHARS with a line saying so.
 */
import type { MergedEntry } from "../../protocol/envelope-schema.ts";
import { MAX_MCP_SUMMARY_ENTRIES, MAX_MCP_TEXT_JSON_CHARS } from "../../protocol/limits.ts";
import type { SearchToolResult } from "../../protocol/mcp-tools.ts";
import type { ToolEnvelope } from "./mcp-tool-calls.ts";

export function toolText(output: ToolEnvelope): string {
  return `${summary(output)}\n\n${boundedJson(output)}`;
}

function boundedJson(output: ToolEnvelope): string {
  const json = JSON.stringify(output);
  if (json.length <= MAX_MCP_TEXT_JSON_CHARS) return json;
  return `${
    json.slice(0, MAX_MCP_TEXT_JSON_CHARS)
  }\n[cut at ${MAX_MCP_TEXT_JSON_CHARS} characters of ${json.length}: structuredContent holds the whole result]`;
}

function summary(output: ToolEnvelope): string {
  const head = `${output.command}: ${output.code} (action ${output.action})`;
  const lines = [head];
  if (output.error) {
    lines.push(
      output.error.field === undefined
        ? output.error.message
        : `${output.error.message} [field ${output.error.field}]`,
    );
  }
  if (output.retry_after_ms !== undefined) {
    lines.push(`retry after ${output.retry_after_ms} ms`);
  }
  const result = output.result;
  if (result === undefined) return lines.join("\n");
  if ("attempts" in result) lines.push(...searchLines(result));
  else if ("evidence" in result) {
    const { evidence } = result;
    lines.push(
      `${evidence.title} <${evidence.locator}> from ${result.provider}: ${evidence.text.length} characters${
        evidence.truncated ? " (truncated)" : ""
      }`,
    );
  } else if ("tiers" in result) {
    lines.push(
      `${result.providers.length} providers: ${
        result.providers.map((p) => `${p.name} (${p.scope}, ${p.sensitivity})`).join(", ")
      }`,
    );
  } else if ("searches_in_flight" in result) {
    lines.push(
      `${result.service} ${result.version}; ${result.searches_in_flight} of ${result.max_inflight} searches in flight`,
      ...result.providers.map((p) => `${p.name}: ${p.state}`),
    );
  }
  return lines.join("\n");
}

function searchLines(result: SearchToolResult): string[] {
  const attempts = result.attempts.map((a) =>
    a.outcome === "success"
      ? `${a.provider} ${a.candidate_count} in ${a.latency_ms} ms`
      : `${a.provider} ${a.outcome} (${a.code})`
  );
  const shown = result.merged.slice(0, MAX_MCP_SUMMARY_ENTRIES).map(entryLine);
  const more = result.merged.length - shown.length;
  return [
    `"${result.query}": ${result.merged.length} results, coverage ${result.coverage}; ${
      attempts.length === 0 ? "no provider contacted" : attempts.join(", ")
    }`,
    ...shown,
    ...(more > 0 ? [`... and ${more} more in structuredContent`] : []),
  ];
}

function entryLine(entry: MergedEntry): string {
  return `${entry.rank}. ${entry.title} <${entry.locator}> found by ${
    entry.found_by.join(", ")
  }, best rank ${entry.best_rank}`;
}
