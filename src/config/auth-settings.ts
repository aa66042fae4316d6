/**
 * Checks the auth bindings (TRACEFETCH_AUTH_*, TRACEFETCH_SIGNING_JWK, TRACEFETCH_REQUIRE_AUTH), as
 * the gateway read them from the environment, and refuses a half-configured setup at start, never
 * on the first request.
 */
import { ConfigError } from "../protocol/config-error.ts";
import { urlProblem } from "./env-values.ts";
import { parseJwks } from "../auth/jwk-set.ts";
import type { KeySource, VerifierSettings } from "../auth/verify-caller.ts";

export type AuthSettings = VerifierSettings & {
  requireAuth: boolean;
  /** TRACEFETCH_SIGNING_JWK as given: a private Ed25519 JWK or a JWKS of them. */
  signingJwk: string | null;
  /** The `iss` of provider tokens (TRACEFETCH_GATEWAY_ISSUER); required with the signing key. */
  gatewayIssuer: string | null;
};

/** The auth variables as read: trimmed, null when unset or empty; the switch parsed. */
export type AuthVariables = {
  /** TRACEFETCH_AUTH_JWKS_URL */
  jwksUrl: string | null;
  /** TRACEFETCH_AUTH_JWKS */
  jwks: string | null;
  /** TRACEFETCH_AUTH_SECRET */
  secret: string | null;
  /** TRACEFETCH_AUTH_ISSUER */
  issuer: string | null;
  /** TRACEFETCH_AUTH_AUDIENCE */
  audience: string | null;
  /** TRACEFETCH_REQUIRE_AUTH */
  requireAuth: boolean;
  /** TRACEFETCH_SIGNING_JWK */
  signingJwk: string | null;
  /** TRACEFETCH_GATEWAY_ISSUER */
  gatewayIssuer: string | null;
};

export function readAuthSettings(vars: AuthVariables, allowLoopback: boolean): AuthSettings {
  const sources: KeySource[] = [];
  const { jwksUrl, jwks, secret, issuer, audience, requireAuth, signingJwk, gatewayIssuer } = vars;
  if (jwksUrl !== null) {
    const problem = urlProblem(jwksUrl, { kind: "endpoint", allowLoopback });
    if (problem) throw new ConfigError(`TRACEFETCH_AUTH_JWKS_URL ${problem}`);
    sources.push({ kind: "jwks_url", url: jwksUrl });
  }
  if (jwks !== null) {
    const set = parseJwks("TRACEFETCH_AUTH_JWKS", jwks);
    // Verification needs public keys only; a private key here is a leak waiting to happen.
    if (set.keys.some((k) => "d" in k)) {
      throw new ConfigError(
        'TRACEFETCH_AUTH_JWKS must hold public keys only (a key has a private "d")',
      );
    }
    sources.push({ kind: "jwks", jwks: set });
  }
  // At least MIN_HS256_SECRET_BYTES: its variable's schema (settings.ts) checked it.
  if (secret !== null) sources.push({ kind: "secret", secret: new TextEncoder().encode(secret) });
  if (sources.length > 0 && (issuer === null || audience === null)) {
    throw new ConfigError(
      "caller tokens need TRACEFETCH_AUTH_ISSUER and TRACEFETCH_AUTH_AUDIENCE: iss and aud are always checked",
    );
  }
  if (sources.length === 0 && (issuer !== null || audience !== null || requireAuth)) {
    throw new ConfigError(
      "TRACEFETCH_AUTH_ISSUER or TRACEFETCH_AUTH_AUDIENCE is set, or TRACEFETCH_REQUIRE_AUTH is on, but no key source is: set TRACEFETCH_AUTH_JWKS_URL, TRACEFETCH_AUTH_JWKS or TRACEFETCH_AUTH_SECRET",
    );
  }
  if (gatewayIssuer !== null && signingJwk === null) {
    throw new ConfigError("TRACEFETCH_GATEWAY_ISSUER is set but TRACEFETCH_SIGNING_JWK is not");
  }
  // A provider token's `iss` is fixed: never taken from a request, whose Host a caller chooses.
  if (signingJwk !== null && gatewayIssuer === null) {
    throw new ConfigError(
      "TRACEFETCH_SIGNING_JWK is set but TRACEFETCH_GATEWAY_ISSUER is not: provider tokens need the gateway's own URL as their iss",
    );
  }
  return { sources, issuer, audience, requireAuth, signingJwk, gatewayIssuer };
}
