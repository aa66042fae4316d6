/** Keys and token minting for the auth tests: real jose keys, tokens built by hand where needed. */
import { exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";

export type KeyPair = { privateKey: CryptoKey; publicJwk: JWK; privateJwk: JWK };

export async function keyPair(
  alg: "RS256" | "RS384" | "ES256" | "EdDSA",
  kid: string,
): Promise<KeyPair> {
  const { privateKey, publicKey } = await generateKeyPair(alg, {
    extractable: true,
    ...(alg === "EdDSA" ? { crv: "Ed25519" } : {}),
  });
  return {
    privateKey: privateKey as CryptoKey,
    publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: "sig" },
    privateJwk: { ...(await exportJWK(privateKey)), kid, alg },
  };
}

export const ISSUER = "https://issuer.example";
export const AUDIENCE = "tracefetch-test";

export type Claims = Record<string, unknown>;

/** Signs a token; `claims` override the defaults (iss, aud, sub, scope, iat, exp one hour ahead). */
export async function sign(
  key: KeyPair,
  claims: Claims = {},
  header: Record<string, unknown> = {},
  alg = key.publicJwk.alg as string,
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const payload = {
    iss: ISSUER,
    aud: AUDIENCE,
    sub: "alice",
    scope: "tracefetch:private",
    iat: now,
    exp: now + 3600,
    ...claims,
  };
  for (const [k, v] of Object.entries(payload)) if (v === undefined) delete (payload as Claims)[k];
  return await new SignJWT(payload).setProtectedHeader({
    alg,
    ...(key.publicJwk.kid ? { kid: key.publicJwk.kid } : {}),
    ...header,
  })
    .sign(key.privateKey);
}

export const b64url = (value: string | Uint8Array) =>
  Buffer.from(typeof value === "string" ? new TextEncoder().encode(value) : value).toString(
    "base64url",
  );

/** A token with arbitrary header and payload and a raw signature: for forgeries jose would refuse to make. */
export function forge(
  header: Record<string, unknown>,
  payload: Claims,
  signature: Uint8Array | string = "",
): string {
  return `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(payload))}.${
    typeof signature === "string" ? signature : b64url(signature)
  }`;
}

export async function hmac(secret: Uint8Array, data: string): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey(
    "raw",
    secret as BufferSource,
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(data)));
}
