/** Turns an envelope into an HTTP response: status from the code table, Retry-After mirrored. */
import type { EnvelopeCode } from "../protocol/codes.ts";
import type { Envelope } from "../protocol/envelope-schema.ts";
import { httpStatusOf, problemEnvelope } from "../envelope/build-envelope.ts";

/**
 * `headers` are lower-case names. They are handed on as a plain record, not a Headers object: on
 * Node, @hono/node-server writes a record straight to the socket, where Headers would be built
 * only to be read back.
 */
export function envelopeResponse(
  envelope: Envelope,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify(envelope), {
    status: httpStatusOf(envelope),
    headers: envelopeHeaders(envelope, headers),
  });
}

/** The headers every envelope answer carries, after `headers` (lower-case names). */
function envelopeHeaders(
  envelope: Envelope,
  headers: Record<string, string>,
): Record<string, string> {
  // Assigned one by one: a literal mixing spreads and fields took V8's slow path, several µs an answer.
  const out: Record<string, string> = {};
  for (const name in headers) out[name] = headers[name] as string;
  out["content-type"] = "application/json; charset=utf-8";
  out["x-content-type-options"] = NO_SNIFF["x-content-type-options"];
  out["x-request-id"] = envelope.request_id;
  out["cache-control"] = "no-store";
  const challenge = CHALLENGES[envelope.code];
  if (challenge) out["www-authenticate"] = challenge;
  if (envelope.retry_after_ms !== undefined) {
    // Retry-After is whole seconds (RFC 9110 section 10.2.3); round up so a client never comes early.
    out["retry-after"] = String(Math.ceil(envelope.retry_after_ms / 1000));
  }
  return out;
}

/**
 * A refusal for where no Response can go (a connection Node's parser gave up on, written by hand):
 * its status, its headers with `Connection: close` (the connection cannot carry another request),
 * and its body.
 */
export function problemAnswer(
  code: EnvelopeCode,
  message: string,
): { status: number; headers: Record<string, string>; body: string } {
  const envelope = problemEnvelope("unknown", code, crypto.randomUUID(), message);
  return {
    status: httpStatusOf(envelope),
    headers: envelopeHeaders(envelope, { connection: "close" }),
    body: JSON.stringify(envelope),
  };
}

/**
 * Every answer says what it is and forbids a browser to guess otherwise (Fetch, "X-Content-Type-
 * Options"): a JSON envelope quoting provider text must never be read as a script or a page.
 */
export const NO_SNIFF = { "x-content-type-options": "nosniff" } as const;

/** RFC 6750 section 3: the challenge that tells a client which kind of bearer problem it has. */
const CHALLENGES: Partial<Record<EnvelopeCode, string>> = {
  unauthorized: 'Bearer realm="tracefetch"',
  token_invalid: 'Bearer realm="tracefetch", error="invalid_token"',
  token_expired: 'Bearer realm="tracefetch", error="invalid_token", error_description="expired"',
  insufficient_scope: 'Bearer realm="tracefetch", error="insufficient_scope"',
};

/** problemEnvelope's refusal or fault as a response. */
export function problemResponse(...args: Parameters<typeof problemEnvelope>): Response {
  return envelopeResponse(problemEnvelope(...args));
}
