/**
 * Development keys and caller tokens, so sensitive providers can be tried locally.
 *
 *   npm run -s dev:token -- keygen > .env.tracefetch   # export lines: signing key, issuer, audience
 *   . ./.env.tracefetch
 *   npm run -s dev:token -- mint --sub alice --scope "tracefetch:private" [--ttl 3600]
 *
 * `keygen` makes two Ed25519 keys: one the gateway signs provider tokens with, and one standing in
 * for your identity provider, whose public half the gateway trusts and whose private half `mint`
 * signs caller tokens with. Never use these in production.
 */
import { exportJWK, generateKeyPair, importJWK, type JWK, SignJWT } from "jose";
import { parseArgs } from "node:util";

const DEV_ISSUER = "https://issuer.tracefetch.test";
const DEV_AUDIENCE = "tracefetch-dev";
/** A development token lasts an hour unless asked otherwise. */
const DEFAULT_TTL_SECONDS = 3_600;

async function ed25519(kid: string): Promise<{ privateJwk: JWK; publicJwk: JWK }> {
  const { privateKey, publicKey } = await generateKeyPair("EdDSA", {
    crv: "Ed25519",
    extractable: true,
  });
  const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: "EdDSA" };
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: "EdDSA", use: "sig" };
  return { privateJwk, publicJwk };
}

const quote = (value: unknown) => `'${JSON.stringify(value)}'`;

async function keygen(): Promise<void> {
  const stamp = new Date().toISOString().slice(0, 10);
  const signing = await ed25519(`gateway-${stamp}`);
  const issuer = await ed25519(`dev-issuer-${stamp}`);
  console.log(`# TraceFetch Edge development keys (${stamp}); never use them in production.`);
  console.log(`export TRACEFETCH_SIGNING_JWK=${quote(signing.privateJwk)}`);
  console.log(`export TRACEFETCH_AUTH_JWKS=${quote({ keys: [issuer.publicJwk] })}`);
  console.log(`export TRACEFETCH_AUTH_ISSUER=${DEV_ISSUER}`);
  console.log(`export TRACEFETCH_AUTH_AUDIENCE=${DEV_AUDIENCE}`);
  console.log(`export TRACEFETCH_DEV_ISSUER_JWK=${quote(issuer.privateJwk)}`);
}

async function mint(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      sub: { type: "string", default: "developer" },
      scope: { type: "string", default: "tracefetch:*" },
      ttl: { type: "string", default: String(DEFAULT_TTL_SECONDS) },
    },
  });
  const key = process.env.TRACEFETCH_DEV_ISSUER_JWK;
  const secret = process.env.TRACEFETCH_AUTH_SECRET;
  const issuer = process.env.TRACEFETCH_AUTH_ISSUER ?? DEV_ISSUER;
  const audience = process.env.TRACEFETCH_AUTH_AUDIENCE ?? DEV_AUDIENCE;
  if (!key && !secret) {
    console.error("set TRACEFETCH_DEV_ISSUER_JWK (from `keygen`) or TRACEFETCH_AUTH_SECRET first");
    process.exit(2);
  }
  const ttl = Number(values.ttl);
  if (!Number.isInteger(ttl) || ttl < 1) {
    console.error("--ttl is a whole number of seconds");
    process.exit(2);
  }
  const jwk = key ? (JSON.parse(key) as JWK) : null;
  const alg = jwk ? "EdDSA" : "HS256";
  const signingKey = jwk ? await importJWK(jwk, "EdDSA") : new TextEncoder().encode(secret);
  const token = await new SignJWT({ scope: values.scope })
    .setProtectedHeader({ alg, typ: "JWT", ...(jwk?.kid ? { kid: jwk.kid } : {}) })
    .setIssuer(issuer)
    .setAudience(audience)
    .setSubject(values.sub)
    .setIssuedAt()
    .setExpirationTime(`${ttl}s`)
    .sign(signingKey);
  console.log(token);
}

const [command, ...rest] = process.argv.slice(2);
if (command === "keygen") await keygen();
else if (command === "mint") await mint(rest);
else {
  console.error(
    'usage: npm run -s dev:token -- keygen | mint [--sub S] [--scope "tracefetch:x tracefetch:y"] [--ttl SECONDS]',
  );
  process.exit(2);
}
