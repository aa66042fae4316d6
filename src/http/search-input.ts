/**
 * Reads a search request from a POST body or GET query parameters (design 4.1), strictly. The
 * request is fully validated before any provider is contacted.
 */
import { type ParsedSearchRequest, parseSearchRequest } from "../protocol/search-request.ts";
import { parseJson } from "../protocol/json-value.ts";
import { decodeUtf8 } from "../transport/bounded-reader.ts";

/** Query parameters of the GET form and the request fields they fill. */
const GET_FIELDS: Record<string, string> = {
  q: "query",
  scope: "scope",
  providers: "providers",
  limit: "limit",
  tier: "tier",
  view: "view",
  timeout_ms: "timeout_ms",
};

export function requestFromQuery(url: URL): ParsedSearchRequest {
  const input: Record<string, unknown> = {};
  for (const key of new Set(url.searchParams.keys())) {
    const field = GET_FIELDS[key];
    if (field === undefined) {
      return refuse("unknown_field", `unknown query parameter "${key}"`, key);
    }
    const values = url.searchParams.getAll(key);
    if (values.length > 1) {
      return refuse("invalid_field", `"${key}" is given more than once`, field);
    }
    const value = values[0] as string;
    if (field === "providers") {
      input.providers = value.split(",").map((s) => s.trim()).filter((s) => s !== "");
    } else if (field === "limit" || field === "timeout_ms") {
      input[field] = /^-?\d{1,15}$/.test(value) ? Number(value) : value;
    } else {
      input[field] = value;
    }
  }
  if (!("query" in input)) return refuse("query_empty", 'the "q" parameter is required', "query");
  return parseSearchRequest(input);
}

export async function requestFromBody(request: Request): Promise<ParsedSearchRequest> {
  const type = request.headers.get("content-type") ?? "";
  if (!/^application\/json\s*(;\s*charset=("?)utf-8\2\s*)?$/i.test(type.trim())) {
    return refuse("unsupported_media_type", "send the request as application/json (UTF-8)");
  }
  // A BOM is stripped by the decoder.
  const text = decodeUtf8(new Uint8Array(await request.arrayBuffer()));
  if (text === null) return refuse("invalid_utf8", "the body is not valid UTF-8");
  const json = parseJson(text);
  if (json === undefined) return refuse("invalid_json", "the body is not valid JSON");
  return parseSearchRequest(json);
}

function refuse(
  code: Extract<ParsedSearchRequest, { ok: false }>["problem"]["code"],
  message: string,
  field?: string,
): ParsedSearchRequest {
  return { ok: false, problem: field === undefined ? { code, message } : { code, message, field } };
}
