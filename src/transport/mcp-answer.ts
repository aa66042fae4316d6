/**
 * From an MCP `tools/call` result to what a search attempt reports: `isError` is a failed search,
 * the `results` path must lead to a list, and each result's mapped fields become a candidate of a
 * provider-response.v1 document stamped with the entry's name and scope, then settled by the one
 * settling every transport shares (settle-answer.ts). The core sanitises the candidates after.
 */
import { isRecord, parseJson } from "../protocol/json-value.ts";
import { atPath, fieldText, type McpMapping } from "../protocol/mcp-mapping.ts";
import { PROVIDER_RESPONSE_VERSION } from "../protocol/provider-wire.ts";
import { failed, protocolError } from "./failure.ts";
import type { TransportResult } from "./provider-client.ts";
import { settle } from "./settle-answer.ts";

/**
 * Characters of a failed tool's text that are redacted before the message's own bound cuts them:
 * the message keeps far fewer, and redacting a 2 MB text would cost for nothing.
 */
const MAX_FAILED_TEXT_SCANNED = 4_096;

/** Turns one tool result into candidates, at most `limit` of them. */
export function answerFromToolResult(
  result: unknown,
  mapping: McpMapping,
  declared: { name: string; scope: string },
  limit: number,
): TransportResult {
  const violation = (message: string): TransportResult => ({
    kind: "failure",
    ...protocolError("schema_violation", message),
  });
  if (!isRecord(result)) return violation("the tools/call result is not an object");
  if (result.isError === true) {
    const said = contentText(result.content);
    return {
      kind: "failure",
      // A tool's own failure (an upstream it could not reach, a refusal) may pass; redacted and
      // bounded by `failed`, like every provider text.
      ...failed(
        "search_failed",
        "search_failed",
        true,
        `the MCP tool "${mapping.tool}" answered isError${said === "" ? "" : `: ${said}`}`,
      ),
    };
  }
  const source = isRecord(result.structuredContent)
    ? result.structuredContent
    : firstTextJson(result);
  if (source === undefined) {
    return violation(
      "the tool's answer has no structuredContent, and its first text block is not JSON",
    );
  }
  const list = atPath(source, mapping.results);
  if (list === undefined) {
    return violation(`the tool's answer has nothing at the results path "${mapping.results}"`);
  }
  if (!Array.isArray(list)) {
    return violation(
      `the results path "${mapping.results}" holds ${typeName(list)}, not a list`,
    );
  }
  const candidates = [];
  for (const [index, item] of list.slice(0, limit).entries()) {
    const title = fieldText(item, mapping.fields.title);
    const locator = fieldText(item, mapping.fields.locator);
    for (const [name, value] of [["title", title], ["locator", locator]] as const) {
      if (value === null) {
        return violation(
          `result ${index}: fields.${name} (${
            JSON.stringify(mapping.fields[name])
          }) names a path the result lacks or that holds no text`,
        );
      }
    }
    const snippet = fieldText(item, mapping.fields.snippet);
    const published = mapping.fields.published_at === undefined
      ? null
      : fieldText(item, mapping.fields.published_at);
    candidates.push({
      title,
      locator,
      snippet,
      ...(published === null ? {} : { published_at: published }),
    });
  }
  const document = {
    schema_version: PROVIDER_RESPONSE_VERSION,
    provider: declared.name,
    scope: declared.scope,
    candidates,
  };
  return settle("search", document, declared);
}

/** The JSON of the first text block, or undefined when there is none or it is not JSON. */
function firstTextJson(result: Record<string, unknown>): unknown {
  const content = Array.isArray(result.content) ? result.content : [];
  const block = content.find((b) => isRecord(b) && b.type === "text" && typeof b.text === "string");
  return isRecord(block) ? parseJson(block.text as string) : undefined;
}

/** The text blocks of a content list, joined: what a failed tool said. */
function contentText(content: unknown): string {
  if (!Array.isArray(content)) return "";
  return content
    .filter((b) => isRecord(b) && b.type === "text" && typeof b.text === "string")
    .map((b) => (b as { text: string }).text)
    .join(" ")
    .slice(0, MAX_FAILED_TEXT_SCANNED);
}

function typeName(value: unknown): string {
  if (value === null) return "null";
  return isRecord(value) ? "an object" : `a ${typeof value}`;
}
