/**
 * For provider authors: verifies the token a TraceFetch gateway mints for each attempt, as a hook
 * for serveProvider's `verify` option. EdDSA only; the header's `typ` must be `JWT` (a gateway
 * signs search traces with the same key under `typ: tracefetch-trace+jws`, and those are refused
 * by name); `iss` must be the gateway, `aud` this provider (exactly one audience), and `exp`, `iat`
 * and `jti` present.
 */
import { type Jose, loadJose } from "./load-jose.ts";
import type { ProviderErrorCode } from "../protocol/codes.ts";
import { PROVIDER_ERROR_VERSION } from "../protocol/provider-wire.ts";
import { TRACE_JWS_TYPE } from "../protocol/trace-version.ts";
import {
  CLOCK_TOLERANCE_SECONDS,
  JWKS_COOLDOWN_MS,
  JWKS_TIMEOUT_MS,
  MAX_JWKS_BYTES,
} from "../protocol/limits.ts";
import { boundedFetch } from "../io/bounded-fetch.ts";
import { tokenTooLarge } from "./verify-caller.ts";

export type GatewayTokenOptions = {
  /** The gateway's /.well-known/jwks.json, or its keys given inline. */
  jwksUrl?: string;
  jwks?: { keys: Record<string, unknown>[] };
  /** The gateway's issuer (its origin unless it sets TRACEFETCH_GATEWAY_ISSUER). */
  issuer: string;
  /** This provider's name in the gateway's manifest. */
  audience: string;
  fetch?: typeof fetch;
};

export type VerifiedGatewayToken = { subject: string; scope: string; jti: string };

/** Returns serveProvider's `verify` hook: null lets the request through, a Response refuses it. */
export function verifyGatewayToken(
  options: GatewayTokenOptions,
): (request: Request) => Promise<Response | null> {
  const fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
  const { jwks } = options;
  // Parsed now, so a bad URL fails where the provider is set up, not at its first request.
  const jwksUrl = options.jwksUrl === undefined ? null : new URL(options.jwksUrl);
  if (jwks === undefined && jwksUrl === null) {
    throw new Error("verifyGatewayToken needs jwksUrl or jwks");
  }
  // Made once, with the first token: a remote key set keeps its cache between requests.
  let keySet:
    | ReturnType<Jose["createLocalJWKSet"]>
    | ReturnType<Jose["createRemoteJWKSet"]>
    | null = null;
  const keyFrom = (jose: Jose) =>
    keySet ??= jwks !== undefined
      ? jose.createLocalJWKSet(jwks as never)
      : jose.createRemoteJWKSet(jwksUrl as URL, {
        timeoutDuration: JWKS_TIMEOUT_MS,
        cooldownDuration: JWKS_COOLDOWN_MS,
        [jose.customFetch]: boundedFetch(fetchImpl, MAX_JWKS_BYTES, "the gateway's JWKS"),
      });
  return async (request) => {
    const match = /^Bearer ([^\s]+)$/i.exec(request.headers.get("authorization") ?? "");
    if (match === null) return unauthorized("a gateway token is required");
    const token = match[1] as string;
    if (tokenTooLarge(token)) return unauthorized("the token is too large");
    const jose = await loadJose();
    if (typeOf(jose, token) === TRACE_JWS_TYPE) {
      return unauthorized("a signed search trace is not a gateway token");
    }
    try {
      const { payload } = await jose.jwtVerify(token, keyFrom(jose), {
        algorithms: ["EdDSA"],
        // Gateway tokens say `typ: JWT`; anything else the gateway signs is not a token.
        typ: "JWT",
        issuer: options.issuer,
        audience: options.audience,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        requiredClaims: ["exp", "iat", "iss", "aud", "jti"],
      });
      if (Array.isArray(payload.aud) && payload.aud.length !== 1) {
        return unauthorized("a gateway token names exactly one audience");
      }
      return null;
    } catch (error) {
      const { errors } = jose;
      if (error instanceof errors.JWKSTimeout || !(error instanceof errors.JOSEError)) {
        return refuse(503, "adapter_unavailable", "the gateway's keys could not be fetched");
      }
      return unauthorized("the gateway token failed verification");
    }
  };
}

/** The protected header's `typ`, lowercased; null when it cannot be read or has none. */
function typeOf(jose: Jose, token: string): string | null {
  try {
    const typ = jose.decodeProtectedHeader(token).typ;
    return typeof typ === "string" ? typ.toLowerCase() : null;
  } catch {
    return null;
  }
}

/** A missing or failing token: 401 with its challenge (RFC 6750 section 3). */
function unauthorized(message: string): Response {
  return refuse(401, "invalid_request", message, {
    "www-authenticate": 'Bearer realm="tracefetch-provider", error="invalid_token"',
  });
}

/** A `tracefetch.provider-error.v1` body; the caller names both the status and the code. */
function refuse(
  status: number,
  code: ProviderErrorCode,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify({ schema_version: PROVIDER_ERROR_VERSION, code, message }), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}
