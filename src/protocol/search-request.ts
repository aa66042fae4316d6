/**
 * The caller's search request (docs/envelope.md) and the functions that turn a raw value, or JSON
 * text, into a request or a usage-error code. Strict: unknown fields, repeated keys and explicit
 * nulls are refused. The GET form (src/http/search-input.ts) ends in the same function, so both
 * forms answer one request with one code.
 */
import * as v from "valibot";
import type { EnvelopeCode } from "./codes.ts";
import { didYouMean } from "./did-you-mean.ts";
import { isRecord } from "./json-value.ts";
import { type JsonObjectRead, readJsonObject } from "./strict-json.ts";
import { integerIn, type IntegerRange, outOfRange } from "./integer-range.ts";
import {
  checkFilters,
  FILTER_FIELDS,
  filterFieldOf,
  HOST_NAME_RULE,
  normaliseFilters,
  type SearchFilters,
  SearchFiltersSchema,
} from "./search-filters.ts";
import {
  DEFAULT_LIMIT,
  DEFAULT_TIMEOUT_MS,
  MAX_AGE_SECONDS,
  MAX_FILTER_DOMAINS,
  MAX_IDENTIFIER_CHARS,
  MAX_LIMIT,
  MAX_QUERY_CHARS,
  MAX_TIMEOUT_MS,
  MIN_LIMIT,
  MIN_TIMEOUT_MS,
} from "./limits.ts";

export const VIEWS = ["full", "merged"] as const;
export type View = (typeof VIEWS)[number];

/** Scope, provider and tier names are checked against the manifest, so an unknown one gets its own code. */
const Identifier = v.pipe(v.string(), v.maxLength(MAX_IDENTIFIER_CHARS));

/** A search's integer fields; `limit` and `timeout_ms` have codes of their own. */
const SEARCH_RANGES = {
  limit: { min: MIN_LIMIT, max: MAX_LIMIT, code: "limit_out_of_range" },
  timeout_ms: { min: MIN_TIMEOUT_MS, max: MAX_TIMEOUT_MS, code: "timeout_out_of_range" },
  max_age_seconds: { min: 0, max: MAX_AGE_SECONDS, code: "invalid_field" },
} as const satisfies Record<string, IntegerRange>;

export const SearchRequestSchema = v.strictObject({
  version: v.optional(v.literal(1)),
  /**
   * Non-blank: at least one visible character. JSON Schema can say only "not all white space";
   * parseSearchRequest also refuses a query of invisible characters (see isBlankQuery).
   */
  query: v.pipe(v.string(), v.regex(/\S/), v.maxLength(MAX_QUERY_CHARS)),
  scope: v.optional(Identifier),
  providers: v.optional(v.array(Identifier)),
  limit: v.optional(integerIn(SEARCH_RANGES.limit)),
  tier: v.optional(Identifier),
  view: v.optional(v.picklist(VIEWS)),
  timeout_ms: v.optional(integerIn(SEARCH_RANGES.timeout_ms)),
  /** Domain and date filters, applied to every candidate (docs/envelope.md, "Filters"). */
  filters: v.optional(SearchFiltersSchema),
  /** The oldest cached answer the caller accepts; 0: ask the providers (docs/envelope.md). */
  max_age_seconds: v.optional(integerIn(SEARCH_RANGES.max_age_seconds)),
});

export type SearchRequest = {
  query: string;
  scope: string | null;
  providers: string[] | null;
  limit: number;
  tier: string | null;
  view: View;
  timeout_ms: number;
  /** Present only when the request filters something (an empty filters object is no filter). */
  filters?: SearchFilters;
  /** Present only when given: absent, any answer the cache still holds will do. */
  max_age_seconds?: number;
};

export type RequestProblem = { code: EnvelopeCode; message: string; field?: string };

export type ParsedSearchRequest =
  | { ok: true; request: SearchRequest }
  | { ok: false; problem: RequestProblem };

/** The fields of a search request, in the order messages list them. */
export const SEARCH_REQUEST_FIELDS: readonly string[] = Object.keys(SearchRequestSchema.entries);

/**
 * A character no reader sees: white space (including U+00A0 and U+3000), controls, format
 * characters (U+200B, U+200D, U+2060, U+FEFF, bidi marks...) and the other default-ignorable code
 * points (variation selectors, Hangul fillers).
 */
const VISIBLE = /[^\s\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}]/u;

const BLANK_QUERY = "query is blank: it has no visible character";

/** A query with no visible character searches for nothing a person asked for: query_empty. */
export function isBlankQuery(query: string): boolean {
  return !VISIBLE.test(query);
}

/** The JSON number grammar (RFC 8259 section 6), for numbers written as text. */
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/**
 * A numeric field written as text (a GET parameter): a JSON number is that number, converted as
 * JSON.parse converts it (`1e2` is 100, `1.5` stays 1.5 and is then out of range); anything else
 * (`NaN`, `0x10`, ` 5`, `05`, `+5`, "") stays a string, which the schema refuses as invalid_field,
 * as it refuses the string "5" in a JSON body.
 */
export function numberFromText(text: string): number | string {
  return JSON_NUMBER.test(text) ? Number(text) : text;
}

/** Validates a decoded JSON value; the first problem found decides the code. */
export function parseSearchRequest(input: unknown): ParsedSearchRequest {
  const parsed = v.safeParse(SearchRequestSchema, input, { abortEarly: false });
  // JSON Schema cannot express the invisible-character rule, so it runs beside the schema.
  const blank = isRecord(input) && typeof input.query === "string" && isBlankQuery(input.query);
  if (!parsed.success || blank) {
    return { ok: false, problem: problemOf(parsed.success ? [] : parsed.issues, input, blank) };
  }
  const r = parsed.output;
  const filters = normaliseFilters(r.filters);
  // JSON Schema cannot say that a month lacks a day, or that a range ends before it starts.
  const problem = filters === null ? null : checkFilters(filters);
  if (problem !== null) return refused("invalid_field", problem.message, problem.field);
  return {
    ok: true,
    request: {
      query: r.query,
      scope: r.scope ?? null,
      providers: r.providers ?? null,
      limit: r.limit ?? DEFAULT_LIMIT,
      tier: r.tier ?? null,
      view: r.view ?? "full",
      timeout_ms: r.timeout_ms ?? DEFAULT_TIMEOUT_MS,
      ...(filters === null ? {} : { filters }),
      ...(r.max_age_seconds === undefined ? {} : { max_age_seconds: r.max_age_seconds }),
    },
  };
}

/**
 * A search request as JSON text (a POST body, `tracefetch search -` on stdin), read strictly: on
 * top of parseSearchRequest, a repeated key and a lone surrogate are refused (see strict-json.ts).
 * The order of checks matches the GET form: text that is not valid UTF-8 first, then unknown
 * fields, then repeated ones, then the values. `source` names the text in messages.
 */
export function parseSearchRequestText(text: string, source = "the body"): ParsedSearchRequest {
  const read = readJsonObject(text);
  if (!read.ok) return { ok: false, problem: unreadableJson(read, source) };
  const unknown = read.keys.find((key) => !SEARCH_REQUEST_FIELDS.includes(key));
  if (unknown !== undefined) {
    return refused("unknown_field", unknownFieldMessage(unknown), unknown);
  }
  const repeated = read.keys.find((key, i) => read.keys.indexOf(key) !== i);
  if (repeated !== undefined) {
    return refused("invalid_field", `the key "${repeated}" appears more than once`, repeated);
  }
  return parseSearchRequest(read.value);
}

function unknownFieldMessage(field: string): string {
  const hint = fieldHint(field);
  return `unknown field "${field}"${hint === null ? "" : ` (${hint})`}; a search request has ${
    listOf(SEARCH_REQUEST_FIELDS)
  }`;
}

/**
 * What a writer of an unknown field most likely meant. Names of the GET form are the usual slips:
 * `q` is the GET form's `query`, and `stream` and `pretty` are GET parameters only.
 */
function fieldHint(field: string): string | null {
  switch (field) {
    case "q":
      return 'did you mean "query"? "q" is its name in the GET form';
    case "stream":
      return "to stream, send Accept: application/x-ndjson or text/event-stream";
    case "pretty":
      return "pretty=1 is a query parameter of the GET routes";
    case "domains":
      return 'in a body, write "filters": {"domains": {"include": [...]}}';
    case "exclude_domains":
      return 'in a body, write "filters": {"domains": {"exclude": [...]}}';
    case "published_after":
    case "published_before":
      return `in a body, write "filters": {"${field}": "YYYY-MM-DD"}`;
    default:
      return didYouMean(field, SEARCH_REQUEST_FIELDS);
  }
}

/** "a, b and c", for messages. */
export function listOf(names: readonly string[]): string {
  return names.length < 2
    ? names.join("")
    : `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`;
}

/**
 * Why request text is not one strict JSON object, as the refusal it gets: the same words for every
 * request read this way (a search, a fetch, a verify). `source` names the text.
 */
export function unreadableJson(
  read: Extract<JsonObjectRead, { ok: false }>,
  source: string,
): RequestProblem {
  switch (read.problem) {
    case "not_json":
      return { code: "invalid_json", message: `${source} is not valid JSON` };
    case "not_object":
      return { code: "invalid_json", message: `${source} must be one JSON object` };
    case "lone_surrogate":
      return {
        code: "invalid_utf8",
        message:
          `${source} holds a lone UTF-16 surrogate escape (a \\ud800-\\udfff with no partner), which is not valid UTF-8 text`,
      };
    case "repeated_key":
      return {
        code: "invalid_json",
        message: `the key "${read.key}" appears more than once in one object of ${source}`,
      };
  }
}

function refused(code: EnvelopeCode, message: string, field?: string): ParsedSearchRequest {
  return { ok: false, problem: field === undefined ? { code, message } : { code, message, field } };
}

function problemOf(
  issues: v.BaseIssue<unknown>[],
  input: unknown,
  blank: boolean,
): RequestProblem {
  if (!isRecord(input)) {
    return { code: "invalid_json", message: "the body must be one JSON object" };
  }
  // Report the most specific problem: unknown and null fields first, as they explain the rest.
  const ranked = issues.map((issue) => classify(issue));
  // A blank query ranks as the schema's own blank check does: before any other problem of its rank.
  if (blank && !ranked.some((p) => p.code === "query_empty")) {
    ranked.unshift({ rank: 2, code: "query_empty", field: "query", message: BLANK_QUERY });
  }
  ranked.sort((a, b) => a.rank - b.rank);
  const { rank: _rank, ...problem } = ranked[0] ?? {
    rank: 0,
    code: "invalid_field" as const,
    message: "the request is not valid",
  };
  return problem;
}

function classify(issue: v.BaseIssue<unknown>): RequestProblem & { rank: number } {
  const path = v.getDotPath(issue) ?? "";
  const field = filterFieldOf(path);
  // valibot reports a missing required key as a strict_object issue too, with nothing received.
  if (issue.type === "strict_object" && issue.received === "undefined") {
    return field === "query"
      ? { rank: 2, code: "query_empty", field, message: "query is required" }
      : { rank: 3, code: "invalid_field", field, message: `"${field}" is required` };
  }
  // An unknown key expects nothing ("never"); a value that is not an object expects "Object".
  if (issue.type === "strict_object" && issue.expected === "never") {
    const at = field.lastIndexOf(".");
    const members = at < 0 ? undefined : FILTER_FIELDS[field.slice(0, at)];
    const message = members === undefined
      ? unknownFieldMessage(field)
      : unknownMemberMessage(field.slice(0, at), field.slice(at + 1), members);
    return { rank: 0, code: "unknown_field", field, message };
  }
  if (issue.input === null) {
    const what = field === path ? `"${field}"` : `an item of ${field}`;
    return { rank: 1, code: "null_field", field, message: `${what} is null; omit it instead` };
  }
  const numeric = typeof issue.input === "number";
  if (field === "query" && issue.type === "regex") {
    return { rank: 2, code: "query_empty", field, message: BLANK_QUERY };
  }
  if (field === "query" && issue.type === "max_length") {
    return {
      rank: 2,
      code: "query_too_long",
      field,
      message: `query has more than ${MAX_QUERY_CHARS} characters`,
    };
  }
  const range = numeric && Object.hasOwn(SEARCH_RANGES, field)
    ? SEARCH_RANGES[field as keyof typeof SEARCH_RANGES]
    : undefined;
  if (range !== undefined) {
    // A code of its own ranks with the query's; invalid_field with the other values.
    return { rank: range.code === "invalid_field" ? 3 : 2, ...outOfRange(field, range) };
  }
  if (field.startsWith("filters.domains.") && field === path && issue.type === "min_length") {
    return {
      rank: 3,
      code: "invalid_field",
      field,
      message: `${field} is empty: name at least one host, or leave the list out`,
    };
  }
  if (field.startsWith("filters.domains.") && field === path && issue.type === "max_length") {
    return {
      rank: 3,
      code: "invalid_field",
      field,
      message: `${field} names more than ${MAX_FILTER_DOMAINS} hosts`,
    };
  }
  if (field !== path) {
    const item = Number(path.slice(path.lastIndexOf(".") + 1)) + 1;
    return {
      rank: 3,
      code: "invalid_field",
      field,
      message: `item ${item} of ${field} is not ${HOST_NAME_RULE}`,
    };
  }
  if (field.startsWith("filters.published_") && issue.type === "iso_date") {
    return {
      rank: 3,
      code: "invalid_field",
      field,
      message:
        `${field} must be a date written YYYY-MM-DD (RFC 3339 full-date), such as 2025-01-31`,
    };
  }
  const what = field === "" ? "request" : `"${field}"`;
  return { rank: 3, code: "invalid_field", field, message: `${what}: ${issue.message}` };
}

function unknownMemberMessage(parent: string, key: string, members: readonly string[]): string {
  const hint = didYouMean(key, members);
  return `unknown field "${key}" in ${parent}${hint === null ? "" : ` (${hint})`}; ${parent} has ${
    listOf(members)
  }`;
}
