/**
 * The tokens the API contract's cases send, by name: HS256 tokens the `full` and `guarded`
 * gateways verify (tests/support/contract-gateways.ts), with each scope a route tells apart, one
 * expired, one that is not a token, and one signed for the `locked` gateway, whose keys cannot be
 * fetched.
 */
import { SignJWT } from "jose";
import { ADMIN_SCOPE, METRICS_SCOPE } from "../../src/core/caller.ts";
import { AUDIENCE, forge, ISSUER } from "./auth-keys.ts";

export type TokenName =
  | "reader"
  | "plain"
  | "admin"
  | "metrics"
  | "expired"
  | "invalid"
  | "unfetchable";

/** Each token, made when asked, signed with `secret` (HS256) where it is signed. */
export function contractTokens(secret: string): Record<TokenName, () => Promise<string>> {
  const hs256 = new TextEncoder().encode(secret);
  const signed = (claims: Record<string, unknown>) => {
    const now = Math.floor(Date.now() / 1_000);
    return new SignJWT({ scope: "", ...claims }).setProtectedHeader({ alg: "HS256" })
      .setIssuer(ISSUER).setAudience(AUDIENCE).setSubject("contract").setIssuedAt(now - 60)
      .setExpirationTime(claims.exp === undefined ? now + 3_600 : (claims.exp as number))
      .sign(hs256);
  };
  return {
    reader: () => signed({ scope: "tracefetch:private" }),
    plain: () => signed({}),
    admin: () => signed({ scope: `${ADMIN_SCOPE} tracefetch:private` }),
    metrics: () => signed({ scope: METRICS_SCOPE }),
    expired: () => signed({ exp: Math.floor(Date.now() / 1_000) - 3_600 }),
    invalid: () => Promise.resolve("not.a.token"),
    // Verified against the locked gateway's JWKS, which cannot be fetched.
    unfetchable: () =>
      Promise.resolve(forge({ alg: "EdDSA", kid: "k-1" }, {
        iss: ISSUER,
        aud: AUDIENCE,
        sub: "contract",
        exp: Math.floor(Date.now() / 1_000) + 3_600,
      }, "c2ln")),
  };
}
