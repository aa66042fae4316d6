/**
 * The receipt of a fetch (docs/security.md, "Fetch receipts"): a compact JWS the gateway signs
 * with its TRACEFETCH_SIGNING_JWK over what it fetched and returned, under the `typ`
 * RECEIPT_TYP, so that anyone holding `/.well-known/jwks.json` can check it offline with jose
 * (`jwtVerify` or `compactVerify`). The receipt carries no `exp`: it records a fact, it grants
 * nothing.
 */
import type { JWK } from "jose";
import * as v from "valibot";
import { type ReceiptClaims, ReceiptClaimsSchema } from "../protocol/evidence-schema.ts";
import { RECEIPT_TYP } from "../protocol/evidence-route-limits.ts";
import { loadJose } from "./load-jose.ts";
import type { ProviderTokenSigner } from "./provider-token-signer.ts";

/** What a receipt states, apart from who signed it and when. */
export type ReceiptFacts = Omit<ReceiptClaims, "iss" | "iat" | "jti">;

/** Signs one receipt with the gateway's key: `iss`, `iat` and a fresh `jti` added to the facts. */
export async function signReceipt(
  signer: Pick<ProviderTokenSigner, "signDocument">,
  issuer: string,
  facts: ReceiptFacts,
  nowMs: number,
): Promise<string> {
  const claims: ReceiptClaims = {
    iss: issuer,
    iat: Math.floor(nowMs / 1000),
    jti: crypto.randomUUID(),
    ...facts,
  };
  return await signer.signDocument(new TextEncoder().encode(JSON.stringify(claims)), RECEIPT_TYP);
}

export type ReceiptCheck =
  | { ok: true; claims: ReceiptClaims }
  | { ok: false; reason: string };

/**
 * Checks a receipt against a public JWK Set: the signature (EdDSA only, the key picked by `kid`),
 * the `typ`, the issuer when one is given, and the claims' shape. Never throws for a bad receipt.
 */
export async function checkReceipt(
  receipt: string,
  jwks: { keys: JWK[] },
  issuer: string | null,
): Promise<ReceiptCheck> {
  const jose = await loadJose();
  let payload: unknown;
  try {
    const verified = await jose.jwtVerify(receipt, jose.createLocalJWKSet(jwks), {
      algorithms: ["EdDSA"],
      typ: RECEIPT_TYP,
      ...(issuer === null ? {} : { issuer }),
    });
    payload = verified.payload;
  } catch (error) {
    return { ok: false, reason: refusalOf(error, jose.errors) };
  }
  const claims = v.safeParse(ReceiptClaimsSchema, payload);
  if (!claims.success) {
    return { ok: false, reason: "the signature holds, but the claims are not a fetch receipt's" };
  }
  return { ok: true, claims: claims.output };
}

/** jose's refusal in words; an error it does not name is a bug of ours and is thrown on. */
function refusalOf(error: unknown, errors: typeof import("jose").errors): string {
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return "the signature does not match the receipt's claims";
  }
  if (error instanceof errors.JWKSNoMatchingKey) {
    return "no key of the gateway's JWK Set matches the receipt's kid";
  }
  if (error instanceof errors.JWTClaimValidationFailed) {
    return `the receipt's "${error.claim}" claim is refused (${error.reason})`;
  }
  if (error instanceof errors.JOSEAlgNotAllowed) return "the receipt is not signed with EdDSA";
  if (error instanceof errors.JOSEError) return `the receipt is not a valid JWS (${error.code})`;
  throw error;
}
