/**
 * The requests of the gateway's provider routes (docs/envelope.md, "Other routes"): one JSON
 * object naming a provider, and for expand a locator. Read as strictly as a search request: an
 * unknown or repeated field, a null, or a value of the wrong type or length is refused before any
 * provider is contacted.
 */
import type { RequestProblem } from "./search-request.ts";
import { listOf } from "./search-request.ts";
import { readJsonObject } from "./strict-json.ts";
import { MAX_LOCATOR_CHARS, MAX_NAME_CHARS } from "./limits.ts";
import { didYouMean } from "./did-you-mean.ts";

export type ExpandAsk = { provider: string; locator: string };
export type RefreshAsk = { provider: string };

export type ParsedAction<T> = { ok: true; request: T } | { ok: false; problem: RequestProblem };

const EXPAND_FIELDS = ["provider", "locator"] as const;
const REFRESH_FIELDS = ["provider"] as const;

export function parseExpandRequestText(text: string): ParsedAction<ExpandAsk> {
  const read = readFields(text, EXPAND_FIELDS);
  if (!read.ok) return read;
  const provider = providerName(read.value.provider);
  if (provider !== null) return provider;
  const locator = read.value.locator;
  if (locator === undefined) return refused("invalid_field", '"locator" is required', "locator");
  if (locator === null) return refused("null_field", '"locator" must not be null', "locator");
  if (typeof locator !== "string" || locator.length === 0) {
    return refused("invalid_field", '"locator" must be a non-empty string', "locator");
  }
  if (locator.length > MAX_LOCATOR_CHARS && Array.from(locator).length > MAX_LOCATOR_CHARS) {
    return refused(
      "invalid_field",
      `"locator" is longer than ${MAX_LOCATOR_CHARS} code points`,
      "locator",
    );
  }
  return { ok: true, request: { provider: read.value.provider as string, locator } };
}

export function parseRefreshRequestText(text: string): ParsedAction<RefreshAsk> {
  const read = readFields(text, REFRESH_FIELDS);
  if (!read.ok) return read;
  const provider = providerName(read.value.provider);
  if (provider !== null) return provider;
  return { ok: true, request: { provider: read.value.provider as string } };
}

function providerName(value: unknown): { ok: false; problem: RequestProblem } | null {
  if (value === undefined) return refused("invalid_field", '"provider" is required', "provider");
  if (value === null) return refused("null_field", '"provider" must not be null', "provider");
  if (typeof value !== "string" || value.length === 0 || value.length > MAX_NAME_CHARS) {
    return refused(
      "invalid_field",
      `"provider" must be a provider's name (1 to ${MAX_NAME_CHARS} characters)`,
      "provider",
    );
  }
  return null;
}

type Fields =
  | { ok: true; value: Record<string, unknown> }
  | { ok: false; problem: RequestProblem };

function readFields(text: string, fields: readonly string[]): Fields {
  const read = readJsonObject(text);
  if (!read.ok) {
    switch (read.problem) {
      case "not_json":
        return refused("invalid_json", "the body is not valid JSON");
      case "not_object":
        return refused("invalid_json", "the body must be one JSON object");
      case "lone_surrogate":
        return refused(
          "invalid_utf8",
          "the body holds a lone UTF-16 surrogate escape, which is not valid UTF-8 text",
        );
      case "repeated_key":
        return refused("invalid_json", `the key "${read.key}" appears more than once`);
    }
  }
  const unknown = read.keys.find((key) => !fields.includes(key));
  if (unknown !== undefined) {
    const hint = didYouMean(unknown, fields);
    return refused(
      "unknown_field",
      `unknown field "${unknown}"${hint === null ? "" : ` (${hint})`}; the request takes ${
        listOf(fields)
      }`,
      unknown,
    );
  }
  const repeated = read.keys.find((key, i) => read.keys.indexOf(key) !== i);
  if (repeated !== undefined) {
    return refused("invalid_field", `the key "${repeated}" appears more than once`, repeated);
  }
  return { ok: true, value: read.value };
}

function refused(
  code: RequestProblem["code"],
  message: string,
  field?: string,
): { ok: false; problem: RequestProblem } {
  return { ok: false, problem: field === undefined ? { code, message } : { code, message, field } };
}
