/**
 * The query parameters of `GET /v1/search` for the OpenAPI document: exactly the ones the route
 * reads (GET_PARAMS), each with the JSON Schema of the request field it fills. A parameter the
 * route reads without a description here stops the generation.
 */
import { toJsonSchema } from "@valibot/to-json-schema";
import { SearchRequestSchema } from "../src/protocol/mod.ts";
import { GET_PARAMS } from "../src/http/search-input.ts";
import { JSON_SCHEMA_CONVERSION } from "./json-schema-conversion.ts";
import type { Fragment } from "./openapi-answers.ts";

/** What each parameter means, by name; `pretty` is every GET's (components.parameters). */
const DESCRIPTIONS: Record<string, string> = {
  q: "The query: the request's `query`.",
  scope: "A scope (`auto`, `local`, `public`, or one a provider declares).",
  providers: "Provider names, comma-separated; empty selects none.",
  limit: "Results asked of each provider and kept in `merged`.",
  tier: "A cost tier of the manifest.",
  view: "`merged` leaves each provider's own candidates out.",
  timeout_ms: "The search's deadline, in milliseconds.",
  max_age_seconds: "The oldest cached provider answer accepted, in seconds; 0 asks the providers.",
  domains: "Keep only pages from these hosts and their subdomains, comma-separated.",
  exclude_domains: "Drop pages from these hosts and their subdomains, comma-separated.",
  published_after: "Keep only pages published on or after this date (YYYY-MM-DD).",
  published_before: "Keep only pages published on or before this date (YYYY-MM-DD).",
  stream: "Stream the search as NDJSON or Server-Sent Events instead of one envelope.",
};

/** Parameters that hold a list, comma-separated, where the body has an array. */
const LISTS = new Set(["providers", "filters.domains.include", "filters.domains.exclude"]);

type Json = { properties?: Record<string, Json> } & Record<string, unknown>;

/** The JSON Schema of a field of the request, by its dotted path (`filters.published_after`). */
function fieldSchema(request: Json, field: string): Json {
  let at: Json = request;
  for (const key of field.split(".")) {
    const next = at.properties?.[key];
    if (next === undefined) throw new Error(`the search request has no field ${field}`);
    at = next;
  }
  return at;
}

export function searchParameters(): Fragment[] {
  const request = toJsonSchema(SearchRequestSchema, JSON_SCHEMA_CONVERSION) as Json;
  const out: Fragment[] = [];
  for (const [name, field] of GET_PARAMS) {
    if (name === "pretty") continue;
    const description = DESCRIPTIONS[name];
    if (description === undefined) {
      throw new Error(
        `GET /v1/search reads "${name}", which openapi-parameters.ts does not describe`,
      );
    }
    const schema = name === "stream"
      ? { enum: ["ndjson", "sse"], type: "string" }
      : LISTS.has(field)
      ? { type: "string" }
      : fieldSchema(request, field);
    out.push({ name, in: "query", required: name === "q", description, schema });
  }
  return out;
}
