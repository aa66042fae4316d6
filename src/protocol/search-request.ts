/**
 * The caller's search request (design 4.1) and the one function that turns a raw value into a
 * request or a usage-error code. Strict: unknown fields and explicit nulls are refused.
 */
import * as v from "valibot";
import type { EnvelopeCode } from "./codes.ts";
import {
  DEFAULT_LIMIT,
  DEFAULT_TIMEOUT_MS,
  MAX_LIMIT,
  MAX_QUERY_CHARS,
  MAX_TIMEOUT_MS,
  MIN_LIMIT,
  MIN_TIMEOUT_MS,
} from "./limits.ts";

export const VIEWS = ["full", "merged"] as const;
export type View = (typeof VIEWS)[number];

/** Scope, provider and tier names are checked against the manifest, so an unknown one gets its own code. */
const Identifier = v.pipe(v.string(), v.maxLength(64));

export const SearchRequestSchema = v.strictObject({
  version: v.optional(v.literal(1)),
  /** Non-blank: at least one non-space character. */
  query: v.pipe(v.string(), v.regex(/\S/), v.maxLength(MAX_QUERY_CHARS)),
  scope: v.optional(Identifier),
  providers: v.optional(v.array(Identifier)),
  limit: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(MIN_LIMIT), v.maxValue(MAX_LIMIT)),
  ),
  tier: v.optional(Identifier),
  view: v.optional(v.picklist(VIEWS)),
  timeout_ms: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(MIN_TIMEOUT_MS), v.maxValue(MAX_TIMEOUT_MS)),
  ),
});

export type SearchRequest = {
  query: string;
  scope: string | null;
  providers: string[] | null;
  limit: number;
  tier: string | null;
  view: View;
  timeout_ms: number;
};

export type RequestProblem = { code: EnvelopeCode; message: string; field?: string };

export type ParsedSearchRequest =
  | { ok: true; request: SearchRequest }
  | { ok: false; problem: RequestProblem };

/** Validates a decoded JSON value; the first problem found decides the code. */
export function parseSearchRequest(input: unknown): ParsedSearchRequest {
  const parsed = v.safeParse(SearchRequestSchema, input, { abortEarly: false });
  if (!parsed.success) return { ok: false, problem: problemOf(parsed.issues, input) };
  const r = parsed.output;
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
    },
  };
}

function problemOf(issues: v.BaseIssue<unknown>[], input: unknown): RequestProblem {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return { code: "invalid_json", message: "the body must be one JSON object" };
  }
  // Report the most specific problem: unknown and null fields first, as they explain the rest.
  const ranked = issues.map((issue) => classify(issue)).sort((a, b) => a.rank - b.rank);
  const { rank: _rank, ...problem } = ranked[0] ?? {
    rank: 0,
    code: "invalid_field" as const,
    message: "the request is not valid",
  };
  return problem;
}

function classify(issue: v.BaseIssue<unknown>): RequestProblem & { rank: number } {
  const field = (issue.path ?? []).map((p) => String(p.key)).join(".");
  // valibot reports a missing required key as a strict_object issue too, with nothing received.
  if (issue.type === "strict_object" && issue.received === "undefined") {
    return field === "query"
      ? { rank: 2, code: "query_empty", field, message: "query is required" }
      : { rank: 3, code: "invalid_field", field, message: `"${field}" is required` };
  }
  if (issue.type === "strict_object") {
    return { rank: 0, code: "unknown_field", field, message: `unknown field "${field}"` };
  }
  if (issue.input === null) {
    return { rank: 1, code: "null_field", field, message: `"${field}" is null; omit it instead` };
  }
  const numeric = typeof issue.input === "number";
  if (field === "query" && issue.type === "regex") {
    return { rank: 2, code: "query_empty", field, message: "query is blank" };
  }
  if (field === "query" && issue.type === "max_length") {
    return {
      rank: 2,
      code: "query_too_long",
      field,
      message: `query has more than ${MAX_QUERY_CHARS} characters`,
    };
  }
  if (field === "limit" && numeric) {
    return {
      rank: 2,
      code: "limit_out_of_range",
      field,
      message: `limit must be an integer from ${MIN_LIMIT} to ${MAX_LIMIT}`,
    };
  }
  if (field === "timeout_ms" && numeric) {
    return {
      rank: 2,
      code: "timeout_out_of_range",
      field,
      message: `timeout_ms must be an integer from ${MIN_TIMEOUT_MS} to ${MAX_TIMEOUT_MS}`,
    };
  }
  const what = field === "" ? "request" : `"${field}"`;
  return { rank: 3, code: "invalid_field", field, message: `${what}: ${issue.message}` };
}
