/**
 * How an MCP search tool's answer becomes candidates (docs/providers.md, "An MCP server as a
 * provider"): the `mcp` block of a `transport: "mcp"` manifest entry. The shape is valibot's; the
 * rules inside strings (paths, templates, placeholders) are checked by `mappingProblems` when the
 * manifest loads, so a bad mapping fails configuration, never a search with an empty list.
 *
 * Paths are dotted keys (`data.items`, `hits.0.url`); a number indexes a list. A field's value is
 * either a path into one result or a template whose `{path}` placeholders are paths into it.
 */
import * as v from "valibot";
import { isRecord } from "./json-value.ts";
import { didYouMean } from "./did-you-mean.ts";
import { MAX_MCP_TOOL_NAME_CHARS } from "./limits.ts";

/** A tool name MCP allows (the 2025-06-18 revision's guidance): at most 128 such characters. */
export const MCP_TOOL_NAME = new RegExp(`^[A-Za-z0-9_./-]{1,${MAX_MCP_TOOL_NAME_CHARS}}$`);
/** A dotted path: keys of letters, digits, `_`, `-` or `$`, separated by dots. */
export const MCP_PATH = /^[A-Za-z0-9_$-]+(?:\.[A-Za-z0-9_$-]+)*$/;
/** A placeholder inside a string: `{` a path `}`. */
const PLACEHOLDER = /\{([^{}]*)\}/g;
/** Placeholders an argument template may name: the request's own fields. */
export const ARGUMENT_PLACEHOLDERS = ["query", "limit"] as const;
/** Longest mapping string kept: longer ones are configuration mistakes, not paths. */
export const MAX_MAPPING_STRING_CHARS = 512;

const MappingString = v.pipe(v.string(), v.minLength(1), v.maxLength(MAX_MAPPING_STRING_CHARS));

export const McpFieldsSchema = v.strictObject({
  title: MappingString,
  locator: MappingString,
  snippet: MappingString,
  published_at: v.optional(MappingString),
});
export type McpFields = v.InferOutput<typeof McpFieldsSchema>;
export const MCP_FIELD_NAMES = ["title", "locator", "snippet", "published_at"] as const;
export type McpFieldName = (typeof MCP_FIELD_NAMES)[number];

export const McpMappingSchema = v.strictObject({
  /** The tool to call, as the server's `tools/list` names it. */
  tool: v.pipe(v.string(), v.regex(MCP_TOOL_NAME)),
  /** The tool's arguments; `"{query}"` and `"{limit}"` take the request's values. */
  arguments: v.optional(v.record(v.string(), v.unknown()), {}),
  /** A dotted path to the list of results in `structuredContent` (or the first text block's JSON). */
  results: MappingString,
  fields: McpFieldsSchema,
});
export type McpMapping = v.InferOutput<typeof McpMappingSchema>;

/** One problem with a mapping: the field under `mcp` (dotted) and what is wrong with it. */
export type MappingProblem = { field: string; message: string };

/** The rules inside a mapping's strings; an empty list when it is sound. */
export function mappingProblems(mapping: McpMapping): MappingProblem[] {
  const problems: MappingProblem[] = [];
  if (!MCP_PATH.test(mapping.results)) {
    problems.push({
      field: "results",
      message: `must be a dotted path such as "data.items"; got ${JSON.stringify(mapping.results)}`,
    });
  }
  for (const name of MCP_FIELD_NAMES) {
    const value = mapping.fields[name];
    if (value === undefined) continue;
    const problem = fieldProblem(value);
    if (problem !== null) problems.push({ field: `fields.${name}`, message: problem });
  }
  argumentProblems(mapping.arguments, "arguments", problems);
  return problems;
}

/** A field is a path, or a template naming at least one path and every placeholder a path. */
function fieldProblem(value: string): string | null {
  const names = placeholders(value);
  if (names === null) return "has an unmatched { or }";
  if (names.length === 0) {
    return MCP_PATH.test(value)
      ? null
      : `is neither a dotted path nor a template naming one ({path}); got ${JSON.stringify(value)}`;
  }
  const bad = names.find((name) => !MCP_PATH.test(name));
  return bad === undefined ? null : `names {${bad}}, which is not a dotted path`;
}

/**
 * Argument strings: exactly `"{limit}"` or `"{query}"` take the value with its type; `{query}` may
 * also sit inside a longer string; nothing else is a placeholder.
 */
function argumentProblems(value: unknown, at: string, problems: MappingProblem[]): void {
  if (typeof value === "string") {
    if (value === "{limit}" || value === "{query}") return;
    const names = placeholders(value);
    if (names === null) {
      problems.push({ field: at, message: "has an unmatched { or }" });
      return;
    }
    for (const name of names) {
      if (name === "query") continue;
      const message = name === "limit"
        ? '{limit} must be the whole string ("{limit}"), which becomes the request\'s limit as a number'
        : `names {${name}}, which is not a placeholder; only {query} and {limit} are${
          hintFor(name)
        }`;
      problems.push({ field: at, message });
    }
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((item, i) => argumentProblems(item, `${at}.${i}`, problems));
  } else if (isRecord(value)) {
    for (const [key, item] of Object.entries(value)) {
      argumentProblems(item, `${at}.${key}`, problems);
    }
  }
}

function hintFor(name: string): string {
  const hint = didYouMean(name, ARGUMENT_PLACEHOLDERS);
  return hint === null ? "" : `; ${hint}`;
}

/** The placeholders in a string, or null when its braces do not pair. */
export function placeholders(text: string): string[] | null {
  const names = [...text.matchAll(PLACEHOLDER)].map((m) => m[1] as string);
  const rest = text.replace(PLACEHOLDER, "");
  return rest.includes("{") || rest.includes("}") ? null : names;
}

/** The value at a dotted path, or undefined when any step is missing. */
export function atPath(value: unknown, path: string): unknown {
  let here = value;
  for (const key of path.split(".")) {
    if (Array.isArray(here)) {
      if (!/^[0-9]+$/.test(key)) return undefined;
      here = here[Number(key)];
    } else if (isRecord(here) && Object.hasOwn(here, key)) {
      here = here[key];
    } else {
      return undefined;
    }
  }
  return here;
}

/** The tool's arguments for one request: the template with `{query}` and `{limit}` filled in. */
export function fillArguments(
  template: Record<string, unknown>,
  request: { query: string; limit: number },
): Record<string, unknown> {
  const fill = (value: unknown): unknown => {
    if (value === "{query}") return request.query;
    if (value === "{limit}") return request.limit;
    if (typeof value === "string") return value.replaceAll("{query}", request.query);
    if (Array.isArray(value)) return value.map(fill);
    if (isRecord(value)) {
      return Object.fromEntries(Object.entries(value).map(([k, item]) => [k, fill(item)]));
    }
    return value;
  };
  return fill(template) as Record<string, unknown>;
}

/**
 * A field's text for one result: the path's value, or the template with each placeholder's value.
 * A list becomes its items joined with a space; null when a path is missing or not text.
 */
export function fieldText(result: unknown, mapping: string): string | null {
  const names = placeholders(mapping) ?? [];
  if (names.length === 0) return textOf(atPath(result, mapping));
  let missing = false;
  const text = mapping.replace(PLACEHOLDER, (_, name: string) => {
    const part = textOf(atPath(result, name));
    if (part === null) missing = true;
    return part ?? "";
  });
  return missing ? null : text;
}

function textOf(value: unknown): string | null {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value)) {
    const parts = value.map(textOf);
    return parts.some((p) => p === null) ? null : parts.join(" ");
  }
  return null;
}
