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
/** The `iss` of the provider tokens a development gateway mints: where `npm start` listens. */
const DEV_GATEWAY_ISSUER = "http://127.0.0.1:8787";
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

const USAGE = `usage: npm run -s dev:token -- keygen
       npm run -s dev:token -- mint [--sub S] [--scope "tracefetch:x tracefetch:y"] [--ttl SECONDS]

keygen  prints export lines: a gateway signing key, a development issuer's keys, its issuer and
        audience; save them (> .env.tracefetch) and load them (. ./.env.tracefetch)
mint    prints a caller token signed with TRACEFETCH_DEV_ISSUER_JWK (or TRACEFETCH_AUTH_SECRET)
        --sub S        the caller (default developer)
        --scope S      space-separated scopes (default "tracefetch:*")
        --ttl SECONDS  how long it lasts (default ${DEFAULT_TTL_SECONDS})
Development keys only: never use them in production.`;

/** A usage problem: one line and the usage on stderr, exit 2. */
function usageError(problem: string): never {
  console.error(`${problem}\n\n${USAGE}`);
  process.exit(2);
}

const quote = (value: unknown) => `'${JSON.stringify(value)}'`;

async function keygen(): Promise<void> {
  const stamp = new Date().toISOString().slice(0, 10);
  const signing = await ed25519(`gateway-${stamp}`);
  const issuer = await ed25519(`dev-issuer-${stamp}`);
  console.log(`# TraceFetch Edge development keys (${stamp}); never use them in production.`);
  console.log(`export TRACEFETCH_SIGNING_JWK=${quote(signing.privateJwk)}`);
  console.log(`export TRACEFETCH_GATEWAY_ISSUER=${DEV_GATEWAY_ISSUER}`);
  console.log(`export TRACEFETCH_AUTH_JWKS=${quote({ keys: [issuer.publicJwk] })}`);
  console.log(`export TRACEFETCH_AUTH_ISSUER=${DEV_ISSUER}`);
  console.log(`export TRACEFETCH_AUTH_AUDIENCE=${DEV_AUDIENCE}`);
  console.log(`export TRACEFETCH_DEV_ISSUER_JWK=${quote(issuer.privateJwk)}`);
}

async function mint(args: string[]): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: {
        sub: { type: "string", default: "developer" },
        scope: { type: "string", default: "tracefetch:*" },
        ttl: { type: "string", default: String(DEFAULT_TTL_SECONDS) },
      },
    });
  } catch (error) {
    usageError(error instanceof Error ? error.message : String(error));
  }
  const { values } = parsed;
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
const HELP = ["--help", "-h", "help"];
if (command === undefined || HELP.includes(command) || rest.some((arg) => HELP.includes(arg))) {
  // Asked for: the usage on stdout, exit 0; no command at all is a usage error.
  if (command === undefined) usageError("give a command: keygen or mint");
  console.log(USAGE);
} else if (command === "keygen") {
  if (rest.length > 0) usageError(`keygen takes no arguments (got "${rest[0]}")`);
  await keygen();
} else if (command === "mint") {
  await mint(rest);
} else {
  usageError(`there is no command "${command}"`);
}
