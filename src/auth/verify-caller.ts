/**
 * Verifies a caller's bearer token with jose (docs/security.md, "Tokens in: callers"): algorithms
 * pinned, exp, iss and aud required, a few seconds of clock tolerance, a capped size, keys from a
 * JWKS URL (fetched with a byte cap, cached, refetched on an unknown kid at most once per
 * cooldown), a static JWKS, or an HS256 secret. Every bound is in src/protocol/limits.ts.
 */
import type { JWTPayload, jwtVerify } from "jose";
import { type Jose, loadJose } from "./load-jose.ts";
import {
  CLOCK_TOLERANCE_SECONDS,
  JWKS_COOLDOWN_MS,
  JWKS_MAX_AGE_MS,
  JWKS_TIMEOUT_MS,
  MAX_JWKS_BYTES,
  MAX_TOKEN_BYTES,
} from "../protocol/limits.ts";
import { boundedFetch } from "../io/bounded-fetch.ts";
import type { Caller } from "../core/caller.ts";

// The tolerance is part of what a caller's token is checked against; tests mint around it.
export { CLOCK_TOLERANCE_SECONDS };

/** Whether a token passes MAX_TOKEN_BYTES, counted in UTF-8 bytes as it travels. */
export function tokenTooLarge(token: string): boolean {
  return new TextEncoder().encode(token).byteLength > MAX_TOKEN_BYTES;
}

/** Asymmetric algorithms accepted from a JWKS; HS256 only with a configured secret. */
const ASYMMETRIC = ["EdDSA", "ES256", "RS256"];
/** Header parameters that point at keys elsewhere or embed one; we never trust a token's own key. */
const KEY_HEADERS = ["jku", "x5u", "jwk", "x5c"];

export type Verification =
  | { ok: true; caller: Caller }
  | { ok: false; code: "token_invalid" | "token_expired" | "auth_unavailable"; message: string };

export type CallerVerifier = (token: string) => Promise<Verification>;

export type KeySource =
  | { kind: "jwks_url"; url: string }
  | { kind: "jwks"; jwks: { keys: Record<string, unknown>[] } }
  | { kind: "secret"; secret: Uint8Array };

/** What the verifier checks a token against (src/config/auth-settings.ts reads it). */
export type VerifierSettings = {
  /** How caller tokens are verified; empty when callers are all anonymous. */
  sources: KeySource[];
  issuer: string | null;
  audience: string | null;
};

export function createCallerVerifier(
  settings: VerifierSettings,
  fetchImpl: typeof fetch,
): CallerVerifier | null {
  if (settings.sources.length === 0) return null;
  const resolvers = settings.sources.map((source) => resolverFor(source, fetchImpl));
  const secret = settings.sources.find((s) => s.kind === "secret");
  const algorithms = [
    ...(resolvers.some((r) => r.asymmetric) ? ASYMMETRIC : []),
    ...(secret ? ["HS256"] : []),
  ];
  return async (token) => {
    if (tokenTooLarge(token)) {
      return invalid(`the token is over ${MAX_TOKEN_BYTES} bytes`);
    }
    const jose = await loadJose();
    let header: Record<string, unknown>;
    try {
      header = jose.decodeProtectedHeader(token) as Record<string, unknown>;
    } catch {
      return invalid("the token is not a compact JWS");
    }
    const embedded = KEY_HEADERS.find((h) => h in header);
    if (embedded) {
      return invalid(`the token names its own key ("${embedded}"), which is never trusted`);
    }
    if (typeof header.alg !== "string" || !algorithms.includes(header.alg)) {
      return invalid(`algorithm ${JSON.stringify(header.alg)} is not accepted`);
    }
    const resolver = header.alg === "HS256"
      ? resolvers.find((r) => !r.asymmetric)
      : resolvers.find((r) => r.asymmetric);
    if (!resolver) return invalid("no key source accepts this algorithm");
    try {
      const { payload } = await jose.jwtVerify(
        token,
        await resolver.key(),
        {
          algorithms,
          issuer: settings.issuer ?? undefined,
          audience: settings.audience ?? undefined,
          clockTolerance: CLOCK_TOLERANCE_SECONDS,
          requiredClaims: ["exp", "iss", "aud"],
        } as Parameters<typeof jwtVerify>[2],
      );
      // jose checks iat against the clock only together with maxTokenAge (which would make iat
      // required); a token issued in the future is refused here, with the same tolerance.
      if (
        typeof payload.iat === "number" &&
        payload.iat > Date.now() / 1000 + CLOCK_TOLERANCE_SECONDS
      ) {
        return invalid('claim "iat" failed validation (the token is issued in the future)');
      }
      return { ok: true, caller: callerOf(payload) };
    } catch (error) {
      return classifyJoseError(jose.errors, error);
    }
  };
}

type Key = Parameters<typeof jwtVerify>[1];
/** A key source's key, made once, when the first token needs it (a remote set keeps its cache). */
type Resolver = { asymmetric: boolean; key: () => Promise<Key> };

function resolverFor(source: KeySource, fetchImpl: typeof fetch): Resolver {
  let made: Promise<Key> | null = null;
  const once = (make: (jose: Jose) => Key) => () => (made ??= loadJose().then(make));
  switch (source.kind) {
    case "secret":
      return { asymmetric: false, key: () => Promise.resolve(source.secret) };
    case "jwks":
      return {
        asymmetric: true,
        key: once((jose) => jose.createLocalJWKSet(source.jwks as never)),
      };
    case "jwks_url":
      return {
        asymmetric: true,
        key: once((jose) =>
          jose.createRemoteJWKSet(new URL(source.url), {
            timeoutDuration: JWKS_TIMEOUT_MS,
            cooldownDuration: JWKS_COOLDOWN_MS,
            cacheMaxAge: JWKS_MAX_AGE_MS,
            [jose.customFetch]: boundedFetch(fetchImpl, MAX_JWKS_BYTES, "the JWKS"),
          })
        ),
      };
    default: {
      const never: never = source;
      throw new Error(`unhandled key source ${JSON.stringify(never)}`);
    }
  }
}

function callerOf(payload: JWTPayload): Caller {
  const scope = typeof payload.scope === "string" ? payload.scope : "";
  return {
    kind: "token",
    subject: typeof payload.sub === "string" && payload.sub !== "" ? payload.sub : "unknown",
    scopes: new Set(scope.split(" ").filter((s) => s !== "")),
  };
}

/** The one mapping from a verification failure to a code. */
function classifyJoseError(errors: Jose["errors"], error: unknown): Verification {
  if (error instanceof errors.JWTExpired) {
    return { ok: false, code: "token_expired", message: "the token has expired" };
  }
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid) {
    return { ok: false, code: "auth_unavailable", message: "the token keys could not be fetched" };
  }
  if (error instanceof errors.JWTClaimValidationFailed) {
    return invalid(`claim "${error.claim}" failed validation (${error.reason})`);
  }
  if (error instanceof errors.JOSEError) {
    // A JWKS answer other than 200 comes back as a generic JOSE error.
    if (error.code === "ERR_JOSE_GENERIC") {
      return {
        ok: false,
        code: "auth_unavailable",
        message: "the token keys could not be fetched",
      };
    }
    return invalid("the token failed verification");
  }
  // Anything else came from fetching the keys (network, cap): the keys are unavailable, not the token bad.
  return { ok: false, code: "auth_unavailable", message: "the token keys could not be fetched" };
}

function invalid(message: string): Verification {
  return { ok: false, code: "token_invalid", message };
}
