/**
 * Reads a search request from a POST body or GET query parameters (docs/envelope.md), strictly. The
 * request is fully validated before any provider is contacted, and both forms end in the same
 * checks in the same order, so one request written either way gets one answer:
 *
 * - bytes that are not UTF-8: invalid_utf8 (a GET parameter is percent-decoded to bytes first);
 * - an unknown field or parameter: unknown_field, then a repeated one: invalid_field;
 * - then the values, by parseSearchRequest. A GET number is read with the JSON number grammar, so
 *   `limit=1e2` is `{"limit":1e2}`; `providers=a,b` is `["a","b"]` and `providers=` is `[]`.
 *   The filter parameters fill `filters`: `domains=a.org,b.org` is `filters.domains.include`,
 *   `exclude_domains=` its `exclude` (split like `providers`), and `published_after` and
 *   `published_before` the fields of the same names.
 */
import {
  listOf,
  numberFromText,
  type ParsedSearchRequest,
  parseSearchRequest,
  parseSearchRequestText,
  type RequestProblem,
  type SearchRequest,
} from "../protocol/search-request.ts";
import { didYouMean } from "../protocol/did-you-mean.ts";
import { prettyProblem } from "./pretty-json.ts";
import { decodeUtf8 } from "../io/bounded-reader.ts";

export type StreamParam = "ndjson" | "sse";

/** The GET form's request, with its `stream` parameter. */
export type QueryRequest =
  | { ok: true; request: SearchRequest; stream: StreamParam | null }
  | { ok: false; problem: RequestProblem };

/**
 * Query parameters of the GET form and the fields they fill: `stream` only picks the format, and
 * `pretty` (indented JSON, read for every GET route by prettyJson) is no part of the request.
 */
export const GET_PARAMS: ReadonlyMap<string, string> = new Map([
  ["q", "query"],
  ["scope", "scope"],
  ["providers", "providers"],
  ["limit", "limit"],
  ["tier", "tier"],
  ["view", "view"],
  ["timeout_ms", "timeout_ms"],
  ["max_age_seconds", "max_age_seconds"],
  ["domains", "filters.domains.include"],
  ["exclude_domains", "filters.domains.exclude"],
  ["published_after", "filters.published_after"],
  ["published_before", "filters.published_before"],
  ["stream", "stream"],
  ["pretty", "pretty"],
]);

export function requestFromQuery(url: URL): QueryRequest {
  const decoded = decodeQuery(url.search);
  if (!decoded.ok) {
    return refuse(
      "invalid_utf8",
      decoded.name === null
        ? "a query parameter name is not valid UTF-8 once percent-decoded"
        : `the "${decoded.name}" parameter is not valid UTF-8 once percent-decoded`,
    );
  }
  const params = decoded.params;
  const unknown = params.find(([name]) => !GET_PARAMS.has(name));
  if (unknown !== undefined) return refuse("unknown_field", unknownParam(unknown[0]), unknown[0]);
  const given = new Map<string, string>();
  for (const [name, value] of params) {
    if (given.has(name)) {
      return refuse("invalid_field", `"${name}" is given more than once`, GET_PARAMS.get(name));
    }
    given.set(name, value);
  }
  const stream = given.get("stream");
  if (stream !== undefined && stream !== "ndjson" && stream !== "sse") {
    return refuse("invalid_field", 'stream must be "ndjson" or "sse"', "stream");
  }
  const pretty = given.get("pretty");
  if (pretty !== undefined) {
    const problem = prettyProblem([pretty]);
    if (problem !== null) return refuse("invalid_field", problem, "pretty");
  }
  if (!given.has("q")) return refuse("query_empty", 'the "q" parameter is required', "query");
  const input: Record<string, unknown> = {};
  for (const [name, value] of given) {
    const field = GET_PARAMS.get(name) as string;
    if (field === "stream" || field === "pretty") continue;
    if (field === "providers") {
      input.providers = value === "" ? [] : value.split(",");
    } else if (field.startsWith("filters.")) {
      putFilter(input, field, value);
    } else if (field === "limit" || field === "timeout_ms" || field === "max_age_seconds") {
      input[field] = numberFromText(value);
    } else {
      input[field] = value;
    }
  }
  const parsed = parseSearchRequest(input);
  return parsed.ok ? { ...parsed, stream: stream ?? null } : parsed;
}

/** Puts a filter parameter where a body writes it: `filters.domains.include` is a list. */
function putFilter(input: Record<string, unknown>, field: string, value: string): void {
  const filters = (input.filters ??= {}) as Record<string, unknown>;
  if (field === "filters.published_after" || field === "filters.published_before") {
    filters[field.slice("filters.".length)] = value;
    return;
  }
  const domains = (filters.domains ??= {}) as Record<string, unknown>;
  domains[field.slice("filters.domains.".length)] = value === "" ? [] : value.split(",");
}

function unknownParam(name: string): string {
  const params = [...GET_PARAMS.keys()];
  const hint = name === "query"
    ? `did you mean "q"? the body's "query" is "q" in the GET form`
    : didYouMean(name, params);
  return `unknown query parameter "${name}"${
    hint === null ? "" : ` (${hint})`
  }; GET /v1/search takes ${listOf(params)}`;
}

export type DecodedQuery =
  | { ok: true; params: Array<[string, string]> }
  | { ok: false; name: string | null };

/**
 * Splits a query string as URLSearchParams does (`&` between pairs, empty pairs skipped, the first
 * `=` between name and value, `+` for a space, a `%` without two hex digits kept as it is), but
 * decodes the percent-decoded bytes as strict UTF-8: URLSearchParams would turn `%FF` into U+FFFD
 * and search for that, where the same byte in a POST body is refused.
 */
export function decodeQuery(search: string): DecodedQuery {
  const params: Array<[string, string]> = [];
  for (const pair of search.replace(/^\?/, "").split("&")) {
    if (pair === "") continue;
    const at = pair.indexOf("=");
    const name = decodeComponent(at < 0 ? pair : pair.slice(0, at));
    if (name === null) return { ok: false, name: null };
    const value = decodeComponent(at < 0 ? "" : pair.slice(at + 1));
    if (value === null) return { ok: false, name };
    params.push([name, value]);
  }
  return { ok: true, params };
}

function decodeComponent(raw: string): string | null {
  const text = raw.replaceAll("+", " ");
  if (!text.includes("%")) return text;
  const encoded = new TextEncoder().encode(text);
  const bytes = new Uint8Array(encoded.length);
  let n = 0;
  for (let i = 0; i < encoded.length; i++) {
    const byte = encoded[i] as number;
    const hi = hexValue(encoded[i + 1]);
    const lo = hexValue(encoded[i + 2]);
    if (byte === 0x25 && hi >= 0 && lo >= 0) {
      bytes[n++] = hi * 16 + lo;
      i += 2;
    } else {
      bytes[n++] = byte;
    }
  }
  const value = bytes.subarray(0, n);
  const decoded = decodeUtf8(value);
  // decodeUtf8 drops a leading BOM, as a body may start with one; in a parameter it is content.
  const bom = value[0] === 0xef && value[1] === 0xbb && value[2] === 0xbf;
  return decoded !== null && bom ? `\uFEFF${decoded}` : decoded;
}

/** The value of one ASCII hex digit, or -1. */
function hexValue(byte: number | undefined): number {
  if (byte === undefined) return -1;
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  const lower = byte | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

/** The POST form's media type: JSON in UTF-8, refused before any of the body is read. */
export function checkMediaType(
  type: string | undefined,
): { ok: true } | Extract<ParsedSearchRequest, { ok: false }> {
  if (/^application\/json\s*(;\s*charset=("?)utf-8\2\s*)?$/i.test((type ?? "").trim())) {
    return { ok: true };
  }
  return refuse("unsupported_media_type", "send the request as application/json (UTF-8)");
}

/** A POST body, already read within its cap and deadline. */
export function requestFromBytes(bytes: Uint8Array): ParsedSearchRequest {
  // A BOM is stripped by the decoder.
  const text = decodeUtf8(bytes);
  if (text === null) return refuse("invalid_utf8", "the body is not valid UTF-8");
  return parseSearchRequestText(text);
}

function refuse(
  code: RequestProblem["code"],
  message: string,
  field?: string,
): { ok: false; problem: RequestProblem } {
  return { ok: false, problem: field === undefined ? { code, message } : { code, message, field } };
}
