/**
 * Mints the short-lived EdDSA JWT a `gateway-token` provider receives for one attempt
 * (docs/security.md, "Tokens out: providers"), and publishes the public halves of the signing keys for /.well-known/jwks.json.
 */
import type { JWK, KeyObject } from "jose";
import { loadJose } from "./load-jose.ts";
import { ConfigError } from "../protocol/config-error.ts";
import { PROVIDER_TOKEN_SLACK_SECONDS } from "../protocol/limits.ts";
import { parseJwks } from "./jwk-set.ts";

/** Members of an OKP JWK that are private; everything else may be published. */
const PRIVATE_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "k", "oth"];

export type MintRequest = {
  issuer: string;
  audience: string;
  subject: string;
  scope: string;
  budgetMs: number;
};

export type ProviderTokenSigner = {
  mint(request: MintRequest): Promise<string>;
  /**
   * Signs a document that is not a token (a batch of search traces) as a compact JWS with the same
   * key, under its own `typ` so that it never passes as a provider token.
   */
  signDocument(payload: Uint8Array, typ: string): Promise<string>;
  /** The public JWK Set providers verify with. */
  readonly publicJwks: { keys: JWK[] };
};

/** Validates the signing key(s) at start; the first key with a private half signs. */
export function createProviderTokenSigner(text: string): ProviderTokenSigner {
  const { keys } = parseJwks("TRACEFETCH_SIGNING_JWK", text);
  for (const key of keys) {
    if (key.kty !== "OKP" || key.crv !== "Ed25519" || typeof key.x !== "string") {
      throw new ConfigError(
        'TRACEFETCH_SIGNING_JWK: every key must be an Ed25519 JWK ({"kty":"OKP","crv":"Ed25519",...})',
      );
    }
  }
  if (keys.length > 1 && keys.some((k) => typeof k.kid !== "string" || k.kid === "")) {
    throw new ConfigError(
      "TRACEFETCH_SIGNING_JWK: with several keys, each needs a kid (providers pick the key by kid)",
    );
  }
  const signing = keys.find((k) => typeof k.d === "string");
  if (!signing) throw new ConfigError('TRACEFETCH_SIGNING_JWK: no key has its private half ("d")');
  // Ed25519 keys are 32 bytes (RFC 8037 section 2); checking now refuses a mangled key at start.
  for (const member of ["x", "d"] as const) {
    if (base64urlLength(signing[member]) !== 32) {
      throw new ConfigError(`TRACEFETCH_SIGNING_JWK: "${member}" is not a 32-byte base64url value`);
    }
  }
  const kid = typeof signing.kid === "string" ? signing.kid : undefined;
  const publicJwks = {
    keys: keys.map((k) => {
      const pub: Record<string, unknown> = { ...k, alg: "EdDSA", use: "sig" };
      for (const member of PRIVATE_MEMBERS) delete pub[member];
      return pub as JWK;
    }),
  };
  let privateKey: Promise<CryptoKey | KeyObject | Uint8Array> | null = null;
  const key =
    () => (privateKey ??= loadJose().then((jose) =>
      jose.importJWK({ ...(signing as JWK), alg: "EdDSA" }, "EdDSA")
    ));
  return {
    publicJwks,
    async signDocument(payload, typ) {
      const { CompactSign } = await loadJose();
      return await new CompactSign(payload)
        .setProtectedHeader({ alg: "EdDSA", typ, ...(kid ? { kid } : {}) })
        .sign(await key());
    },
    async mint(r) {
      const now = Math.floor(Date.now() / 1000);
      const { SignJWT } = await loadJose();
      return await new SignJWT({ scope: r.scope })
        .setProtectedHeader({ alg: "EdDSA", typ: "JWT", ...(kid ? { kid } : {}) })
        .setIssuer(r.issuer)
        .setAudience(r.audience)
        .setSubject(r.subject)
        .setIssuedAt(now)
        .setJti(crypto.randomUUID())
        .setExpirationTime(now + Math.ceil(r.budgetMs / 1000) + PROVIDER_TOKEN_SLACK_SECONDS)
        .sign(await key());
    },
  };
}

function base64urlLength(value: unknown): number {
  if (typeof value !== "string" || !/^[A-Za-z0-9_-]+$/.test(value)) return -1;
  return Math.floor((value.length * 3) / 4);
}
