/** Turns an envelope into an HTTP response: status from the code table, Retry-After mirrored. */
import type { EnvelopeCode } from "../protocol/codes.ts";
import type { Envelope } from "../protocol/envelope-schema.ts";
import { httpStatusOf, problemEnvelope } from "../envelope/build-envelope.ts";

export function envelopeResponse(
  envelope: Envelope,
  headers: Record<string, string> = {},
): Response {
  const out = new Headers(headers);
  out.set("content-type", "application/json; charset=utf-8");
  out.set("x-request-id", envelope.request_id);
  out.set("cache-control", "no-store");
  const challenge = CHALLENGES[envelope.code];
  if (challenge) out.set("www-authenticate", challenge);
  if (envelope.retry_after_ms !== undefined) {
    // Retry-After is whole seconds (RFC 9110 section 10.2.3); round up so a client never comes early.
    out.set("retry-after", String(Math.ceil(envelope.retry_after_ms / 1000)));
  }
  return new Response(JSON.stringify(envelope), { status: httpStatusOf(envelope), headers: out });
}

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
