/**
 * Reads a fetch request from `GET /v1/fetch` query parameters (docs/envelope.md, "Fetching a
 * page") with the checks of the search's GET form in the same order: bytes that are not UTF-8,
 * an unknown parameter, a repeated one, then the values by parseFetchRequest, so that a GET and a
 * POST of one request get one answer. Numbers are read with the JSON number grammar and
 * `include_raw` as the JSON literals `true` and `false`.
 */
import { numberFromText, type RequestProblem } from "../protocol/search-request.ts";
import {
  type FetchAsk,
  type Parsed,
  parseFetchRequest,
  unknownFieldMessage,
} from "../protocol/fetch-request.ts";
import { prettyProblem } from "./pretty-json.ts";
import { decodeQuery } from "./search-input.ts";

/** The GET form's parameters: the request's fields, and `pretty` (read by prettyJson). */
const FETCH_PARAMS = [
  "url",
  "format",
  "max_chars",
  "max_age_seconds",
  "timeout_ms",
  "include_raw",
  "query",
  "max_passages",
  "pretty",
];
const NUMBERS = new Set(["max_chars", "max_age_seconds", "timeout_ms", "max_passages"]);

export function fetchRequestFromQuery(url: URL): Parsed<FetchAsk> {
  const decoded = decodeQuery(url.search);
  if (!decoded.ok) {
    return refuse(
      "invalid_utf8",
      decoded.name === null
        ? "a query parameter name is not valid UTF-8 once percent-decoded"
        : `the "${decoded.name}" parameter is not valid UTF-8 once percent-decoded`,
    );
  }
  const given = new Map<string, string>();
  for (const [name, value] of decoded.params) {
    if (!FETCH_PARAMS.includes(name)) {
      return refuse(
        "unknown_field",
        unknownFieldMessage(name, FETCH_PARAMS, "fetch").replace("field", "query parameter"),
        name,
      );
    }
    if (given.has(name)) return refuse("invalid_field", `"${name}" is given more than once`, name);
    given.set(name, value);
  }
  const pretty = given.get("pretty");
  if (pretty !== undefined) {
    const problem = prettyProblem([pretty]);
    if (problem !== null) return refuse("invalid_field", problem, "pretty");
  }
  const input: Record<string, unknown> = {};
  for (const [name, value] of given) {
    if (name === "pretty") continue;
    if (NUMBERS.has(name)) input[name] = numberFromText(value);
    else if (name === "include_raw") input[name] = booleanFromText(value);
    else input[name] = value;
  }
  return parseFetchRequest(input);
}

function booleanFromText(text: string): boolean | string {
  return text === "true" ? true : text === "false" ? false : text;
}

function refuse(
  code: RequestProblem["code"],
  message: string,
  field?: string,
): { ok: false; problem: RequestProblem } {
  return { ok: false, problem: field === undefined ? { code, message } : { code, message, field } };
}
