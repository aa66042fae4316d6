/**
 * The requests of the evidence routes (docs/envelope.md, "Fetching a page"): `POST /v1/fetch`
 * (and its GET form) and `POST /v1/verify`, as valibot schemas and the functions that read a raw
 * value or JSON text into a request or a usage-error code. As strict as a search request: an
 * unknown or repeated field, a null, a lone surrogate or a value of the wrong type or range is
 * refused before anything is fetched, and a GET and a POST of one request get one answer.
 */
import * as v from "valibot";
import type { RequestProblem } from "./search-request.ts";
import { listOf, unreadableJson } from "./search-request.ts";
import { didYouMean } from "./did-you-mean.ts";
import { isRecord } from "./json-value.ts";
import { readJsonObject } from "./strict-json.ts";
import { integerIn, type IntegerRange, outOfRange } from "./integer-range.ts";
import { MAX_AGE_SECONDS, MAX_QUERY_CHARS } from "./limits.ts";
import { FETCH_FORMATS, type FetchFormat } from "./codes.ts";
import {
  DEFAULT_FETCH_CHARS,
  DEFAULT_FETCH_TIMEOUT_MS,
  MAX_FETCH_CHARS,
  MAX_FETCH_TIMEOUT_MS,
  MAX_FETCH_URL_CHARS,
} from "./fetch-limits.ts";
import {
  DEFAULT_PASSAGES,
  MAX_PASSAGES,
  MAX_QUOTE_CHARS,
  MAX_RECEIPT_CHARS,
  MAX_VERIFY_MARKDOWN_CHARS,
  MIN_FETCH_CHARS,
  MIN_FETCH_TIMEOUT_MS,
} from "./evidence-route-limits.ts";

/** A fetch's integer fields; `timeout_ms` has the code of a search's. */
const FETCH_RANGES = {
  max_chars: { min: MIN_FETCH_CHARS, max: MAX_FETCH_CHARS, code: "invalid_field" },
  max_age_seconds: { min: 0, max: MAX_AGE_SECONDS, code: "invalid_field" },
  timeout_ms: {
    min: MIN_FETCH_TIMEOUT_MS,
    max: MAX_FETCH_TIMEOUT_MS,
    code: "timeout_out_of_range",
  },
  max_passages: { min: 1, max: MAX_PASSAGES, code: "invalid_field" },
} as const satisfies Record<string, IntegerRange>;

export const FetchRequestSchema = v.strictObject({
  /** An absolute http: or https: URL; the fetch core decides whether it may be fetched. */
  url: v.pipe(v.string(), v.minLength(1), v.maxLength(MAX_FETCH_URL_CHARS)),
  format: v.optional(v.picklist(FETCH_FORMATS)),
  /** The returned markdown or text, in code points; longer content is cut and says `truncated`. */
  max_chars: v.optional(integerIn(FETCH_RANGES.max_chars)),
  /** The oldest cached page the caller accepts; 0: fetch it now (docs/envelope.md). */
  max_age_seconds: v.optional(integerIn(FETCH_RANGES.max_age_seconds)),
  timeout_ms: v.optional(integerIn(FETCH_RANGES.timeout_ms)),
  /**
   * Adds `result.raw_base64`, the body as received (decoded from transfer and content encodings),
   * so that a bundle can keep the bytes `source_sha256` covers (`tracefetch fetch --out`).
   */
  include_raw: v.optional(v.boolean()),
  /** Adds `evidence.passages`: the paragraphs of the text that answer it best, ranked. */
  query: v.optional(v.pipe(v.string(), v.regex(/\S/), v.maxLength(MAX_QUERY_CHARS))),
  /** Passages answered at most, with a `query` (default DEFAULT_PASSAGES). */
  max_passages: v.optional(integerIn(FETCH_RANGES.max_passages)),
});

export type FetchAsk = {
  url: string;
  format: FetchFormat;
  max_chars: number;
  timeout_ms: number;
  include_raw: boolean;
  /** Present only when given: absent, any page the cache still holds will do. */
  max_age_seconds?: number;
  /** Present only when given: the passages are ranked against it. */
  query?: string;
  /** Passages answered at most; read only with a query. */
  max_passages: number;
};

export const VerifyRequestSchema = v.strictObject({
  /** The compact JWS of a fetch's `result.receipt`; left out for an unsigned fetch. */
  receipt: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(MAX_RECEIPT_CHARS))),
  /** The `markdown` (or `text`) the receipt covers, exactly as the fetch returned it. */
  markdown: v.pipe(
    v.string(),
    v.check(
      (s) =>
        s.length <= MAX_VERIFY_MARKDOWN_CHARS ||
        Array.from(s).length <= MAX_VERIFY_MARKDOWN_CHARS,
      `is longer than ${MAX_VERIFY_MARKDOWN_CHARS} code points`,
    ),
  ),
  /** A passage to find in the markdown, white space and case folded. */
  quote: v.optional(v.pipe(v.string(), v.regex(/\S/), v.maxLength(MAX_QUOTE_CHARS))),
});

export type VerifyAsk = { receipt: string | null; markdown: string; quote: string | null };

export type Parsed<T> = { ok: true; request: T } | { ok: false; problem: RequestProblem };

export const FETCH_REQUEST_FIELDS: readonly string[] = Object.keys(FetchRequestSchema.entries);
export const VERIFY_REQUEST_FIELDS: readonly string[] = Object.keys(VerifyRequestSchema.entries);

/** Validates a decoded JSON value (a body, or the GET form's parameters) as a fetch request. */
export function parseFetchRequest(input: unknown): Parsed<FetchAsk> {
  const parsed = v.safeParse(FetchRequestSchema, input, { abortEarly: false });
  if (!parsed.success) {
    return {
      ok: false,
      problem: problemOf(parsed.issues, input, "fetch", FETCH_REQUEST_FIELDS, FETCH_RANGES),
    };
  }
  const r = parsed.output;
  if (r.max_passages !== undefined && r.query === undefined) {
    return refused(
      "invalid_field",
      "max_passages needs a query to rank passages by",
      "max_passages",
    );
  }
  return {
    ok: true,
    request: {
      url: r.url,
      format: r.format ?? "markdown",
      max_chars: r.max_chars ?? DEFAULT_FETCH_CHARS,
      timeout_ms: r.timeout_ms ?? DEFAULT_FETCH_TIMEOUT_MS,
      include_raw: r.include_raw ?? false,
      ...(r.max_age_seconds === undefined ? {} : { max_age_seconds: r.max_age_seconds }),
      ...(r.query === undefined ? {} : { query: r.query }),
      max_passages: r.max_passages ?? DEFAULT_PASSAGES,
    },
  };
}

/** A fetch request as JSON text, read as strictly as a search request's (search-request.ts). */
export function parseFetchRequestText(text: string, source = "the body"): Parsed<FetchAsk> {
  const read = readFields(text, FETCH_REQUEST_FIELDS, "fetch", source);
  return read.ok ? parseFetchRequest(read.value) : read;
}

/** A verify request as JSON text. */
export function parseVerifyRequestText(text: string, source = "the body"): Parsed<VerifyAsk> {
  const read = readFields(text, VERIFY_REQUEST_FIELDS, "verify", source);
  if (!read.ok) return read;
  const parsed = v.safeParse(VerifyRequestSchema, read.value, { abortEarly: false });
  if (!parsed.success) {
    return {
      ok: false,
      problem: problemOf(parsed.issues, read.value, "verify", VERIFY_REQUEST_FIELDS),
    };
  }
  const { receipt, markdown, quote } = parsed.output;
  return { ok: true, request: { receipt: receipt ?? null, markdown, quote: quote ?? null } };
}

/** What a request of the evidence routes is, for its messages. */
export type EvidenceAsk = "fetch" | "verify" | "crawl";

/** A request's JSON text as an object whose keys are all known and none repeated. */
export function readFields(
  text: string,
  fields: readonly string[],
  what: EvidenceAsk,
  source: string,
): { ok: true; value: Record<string, unknown> } | { ok: false; problem: RequestProblem } {
  const read = readJsonObject(text);
  if (!read.ok) return { ok: false, problem: unreadableJson(read, source) };
  const unknown = read.keys.find((key) => !fields.includes(key));
  if (unknown !== undefined) {
    return refused("unknown_field", unknownFieldMessage(unknown, fields, what), unknown);
  }
  const repeated = read.keys.find((key, i) => read.keys.indexOf(key) !== i);
  if (repeated !== undefined) {
    return refused("invalid_field", `the key "${repeated}" appears more than once`, repeated);
  }
  return { ok: true, value: read.value };
}

export function unknownFieldMessage(
  field: string,
  fields: readonly string[],
  what: EvidenceAsk,
): string {
  const hint = didYouMean(field, fields);
  return `unknown field "${field}"${hint === null ? "" : ` (${hint})`}; a ${what} request has ${
    listOf(fields)
  }`;
}

/**
 * The most specific problem first: unknown fields, then nulls, then missing, then values; a number
 * in one of the request's integer `ranges` is refused in their one wording (integer-range.ts).
 */
export function problemOf(
  issues: v.BaseIssue<unknown>[],
  input: unknown,
  what: EvidenceAsk,
  fields: readonly string[],
  ranges: Readonly<Record<string, IntegerRange>> = {},
): RequestProblem {
  if (!isRecord(input)) {
    return { code: "invalid_json", message: "the body must be one JSON object" };
  }
  const ranked = issues.map((issue) => classify(issue, fields, what, ranges));
  ranked.sort((a, b) => a.rank - b.rank);
  const { rank: _rank, ...problem } = ranked[0] ?? {
    rank: 0,
    code: "invalid_field" as const,
    message: "the request is not valid",
  };
  return problem;
}

function classify(
  issue: v.BaseIssue<unknown>,
  fields: readonly string[],
  what: EvidenceAsk,
  ranges: Readonly<Record<string, IntegerRange>>,
): RequestProblem & { rank: number } {
  const field = v.getDotPath(issue) ?? "";
  if (issue.type === "strict_object" && issue.received === "undefined") {
    return { rank: 2, code: "invalid_field", field, message: `"${field}" is required` };
  }
  if (issue.type === "strict_object" && issue.expected === "never") {
    return {
      rank: 0,
      code: "unknown_field",
      field,
      message: unknownFieldMessage(field, fields, what),
    };
  }
  if (issue.input === null) {
    return { rank: 1, code: "null_field", field, message: `"${field}" is null; omit it instead` };
  }
  const numeric = typeof issue.input === "number";
  const range = numeric && Object.hasOwn(ranges, field) ? ranges[field] : undefined;
  if (range !== undefined) return { rank: 3, ...outOfRange(field, range) };
  if (field === "url" && typeof issue.input === "string") {
    return {
      rank: 3,
      code: "invalid_field",
      field,
      message:
        `url must be an absolute http: or https: URL of 1 to ${MAX_FETCH_URL_CHARS} characters`,
    };
  }
  if (field === "quote" && issue.type === "regex") {
    return { rank: 3, code: "invalid_field", field, message: "quote is blank" };
  }
  if (field === "query" && issue.type === "regex") {
    return { rank: 3, code: "invalid_field", field, message: "query is blank" };
  }
  const what2 = field === "" ? "request" : `"${field}"`;
  return { rank: 3, code: "invalid_field", field, message: `${what2}: ${issue.message}` };
}

function refused(
  code: RequestProblem["code"],
  message: string,
  field?: string,
): { ok: false; problem: RequestProblem } {
  return { ok: false, problem: field === undefined ? { code, message } : { code, message, field } };
}
