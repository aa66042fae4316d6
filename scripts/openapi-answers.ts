/**
 * The pieces the OpenAPI document's answers are made of (scripts/openapi-operations.ts uses them):
 * references to its components, an envelope of a given result, a raw document, and the lists of
 * envelope codes that refusals of each kind of request may carry.
 */
import type { EnvelopeCode } from "../src/protocol/codes.ts";

export type Fragment = Record<string, unknown>;

export const schemaRef = (name: string): Fragment => ({ $ref: `#/components/schemas/${name}` });

/** An envelope whose `result`, when present, has the shape named. */
export const envelopeOf = (result: string): Fragment => ({
  allOf: [schemaRef("Envelope"), { properties: { result: schemaRef(result) } }],
});

/** A 200 envelope, with the `x-request-id` every envelope is sent with. */
export const okEnvelope = (result: string, description: string): Fragment => ({
  description,
  headers: { "x-request-id": { $ref: "#/components/headers/RequestId" } },
  content: { "application/json": { schema: envelopeOf(result) } },
});

/** A document served as it is, not an envelope. */
export const raw = (type: string, description: string, schema: Fragment = { type: "string" }) => ({
  description,
  content: { [type]: { schema } },
});

export const jsonBody = (schema: string): Fragment => ({
  required: true,
  content: { "application/json": { schema: schemaRef(schema) } },
});

/**
 * Any route: a request line and headers over the listener's bound (answered before any route is
 * chosen), a presented token that fails, keys that cannot be fetched, a fault of the gateway.
 */
export const ANY: EnvelopeCode[] = [
  "headers_too_large",
  "token_invalid",
  "token_expired",
  "auth_unavailable",
  "internal_error",
];
/** Every route but /v1/status and the JWKS: no token, when TRACEFETCH_REQUIRE_AUTH is on. */
export const GUARDED: EnvelopeCode[] = [...ANY, "unauthorized"];
/** A GET: `pretty` other than 0 or 1. */
export const READ: EnvelopeCode[] = [...GUARDED, "invalid_field"];
/** A GET answered before the caller is resolved (the documents of the API, the page's files). */
export const OPEN_READ: EnvelopeCode[] = ["headers_too_large", "internal_error", "invalid_field"];
/** A POST body: its media type, size, deadline and encoding, its fields, and the bodies in read. */
export const BODY: EnvelopeCode[] = [
  "unsupported_media_type",
  "body_too_large",
  "request_timeout",
  "bad_request",
  "invalid_json",
  "invalid_utf8",
  "unknown_field",
  "null_field",
  "invalid_field",
  "overloaded",
];
/** A search's values and its plan, checked before any provider is contacted, and its outcome. */
export const SEARCH: EnvelopeCode[] = [
  "query_empty",
  "query_too_long",
  "limit_out_of_range",
  "timeout_out_of_range",
  "unknown_scope",
  "unknown_provider",
  "unknown_tier",
  "provider_not_in_scope",
  "isolation_conflict",
  "no_providers_selected",
  "insufficient_scope",
  "overloaded",
  // The caller's own `caller_limits` (docs/envelope.md, "Caller limits").
  "rate_limited",
  "all_providers_failed",
];
/** Naming one provider for an action: the rules of naming it in a search, then its answer. */
export const ACTION: EnvelopeCode[] = [
  "unknown_provider",
  "insufficient_scope",
  "action_unsupported",
  "provider_failed",
];

export const SEARCH_OK: Fragment = {
  description: "The search: an envelope, or with `stream` (GET) or an `Accept` of " +
    "`application/x-ndjson` or `text/event-stream`, its events as they happen: `plan`, one " +
    "`provider` per attempt in completion order, `merged`, then `done` with the envelope's " +
    'header; each event is a `StreamEvent` (docs/envelope.md, "Streaming").',
  headers: {
    "x-request-id": { $ref: "#/components/headers/RequestId" },
    "server-timing": { $ref: "#/components/headers/ServerTiming" },
  },
  content: {
    "application/json": { schema: envelopeOf("SearchResult") },
    "application/x-ndjson": {
      schema: { type: "string", description: "one StreamEvent per line, as JSON" },
      "x-item-schema": schemaRef("StreamEvent"),
    },
    "text/event-stream": {
      schema: {
        type: "string",
        description: "Server-Sent Events: `event:` the event's name, `data:` the StreamEvent as " +
          "JSON; a `: heartbeat` comment every 15 s while waiting",
      },
      "x-item-schema": schemaRef("StreamEvent"),
    },
  },
};

export const JSON_RPC: Fragment = {
  type: "object",
  description: "one JSON-RPC 2.0 message of the Model Context Protocol",
  required: ["jsonrpc"],
  properties: { jsonrpc: { const: "2.0" } },
};
