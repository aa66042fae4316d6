/**
 * The secrets the provider-answer fuzz plants in diagnostics, metadata, content types and headers
 * of a provider's answer: a bearer value, a GitHub token, an `api_key` pair, a JWT and a PEM private
 * key, each with the part a caller must never be shown.
 */

export const GHP_TOKEN = "ghp_" + "R7kP2mQ9xW4vL8nT3jH6bF1dS5gY0cZaEuIo";
const JWT_SIGNATURE = "Qm9ndXNTaWduYXR1cmVGdXp6NDcxMQ";
export const JWT = `eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJmdXp6In0.${JWT_SIGNATURE}`;
const PEM_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDfuzzKEY4711";
export const PEM = `-----BEGIN PRIVATE KEY-----\n${PEM_BODY}\n-----END PRIVATE KEY-----`;

/** Each planted text and the part of it that must never be shown. */
export const SECRETS: ReadonlyArray<{ planted: string; secret: string }> = [
  { planted: "Bearer s3cr3tZ", secret: "s3cr3tZ" },
  { planted: GHP_TOKEN, secret: GHP_TOKEN.slice(4) },
  { planted: "api_key=S3CRET", secret: "S3CRET" },
  { planted: JWT, secret: JWT_SIGNATURE },
  { planted: PEM, secret: PEM_BODY },
];
