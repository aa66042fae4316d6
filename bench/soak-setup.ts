/**
 * What a soak run is made of: its providers, the manifest the gateway gets for them, the caller
 * tokens and the gateway's keys for them, and the bounds of the run. Shared by the soak process
 * and its providers child.
 */
import { DEFAULT_BODY_TIMEOUT_MS } from "../src/protocol/limits.ts";
import { ADMIN_SCOPE } from "../src/core/caller.ts";
import { AUDIENCE, ISSUER, keyPair, sign } from "../tests/support/auth-keys.ts";

export type SoakProviderName =
  | "fast"
  | "slow"
  | "hanging"
  | "failing"
  | "endless"
  | "dripping"
  | "no-content"
  | "notes";

export type SoakProvider = {
  name: SoakProviderName;
  scope: string;
  /** The manifest's `timeout_seconds`. */
  timeoutSeconds: number;
};

/** The providers, their scopes and their manifest timeouts. */
export const SOAK_PROVIDERS: readonly SoakProvider[] = [
  { name: "fast", scope: "web", timeoutSeconds: 5 },
  { name: "slow", scope: "web", timeoutSeconds: 5 },
  // Never answers: only its manifest timeout ends the attempt.
  { name: "hanging", scope: "flaky", timeoutSeconds: 1 },
  { name: "failing", scope: "flaky", timeoutSeconds: 5 },
  { name: "endless", scope: "broken", timeoutSeconds: 5 },
  // Under the longest caller deadline, so both timeout budgets occur for it.
  { name: "dripping", scope: "broken", timeoutSeconds: 2 },
  { name: "no-content", scope: "broken", timeoutSeconds: 5 },
  // A corpus that implements every action: the one an expand or a refresh is meant for.
  { name: "notes", scope: "docs", timeoutSeconds: 5 },
];

/** The provider that implements expand and refresh (the others answer them as they answer searches). */
export const ACTION_PROVIDER: SoakProviderName = "notes";

/** Scopes a search may name: the manifest's own and the reserved ones that mean several. */
export const SOAK_SCOPES = ["web", "flaky", "broken", "docs", "auto", "public"] as const;

/** The longest manifest timeout: an expand or refresh waits for a place, then calls, within it. */
export const MAX_PROVIDER_TIMEOUT_MS = Math.max(...SOAK_PROVIDERS.map((p) => p.timeoutSeconds)) *
  1000;

/**
 * The documents of the `notes` corpus: one per pair of the load's query words, so a search finds
 * some of them and an expand has locators a search returned.
 */
export function notesDocuments(
  words: readonly string[],
): Array<{ title: string; locator: string; text: string; published_at: string }> {
  return words.flatMap((a, i) =>
    words.slice(i + 1).map((b, j) => ({
      title: `${a} and ${b}`,
      locator: `https://notes.example/${a}-${b}`,
      text: `How ${a} meets ${b}. `.repeat(8) + `Every ${a} has a ${b}; a ${b} bounds the ${a}.`,
      published_at: `2025-0${1 + ((i + j) % 9)}-1${j % 10}`,
    }))
  );
}

/** The words the load's queries are made of (and the notes corpus's documents). */
export const QUERY_WORDS =
  "retry budget stream gateway fusion cache latency timeout schema envelope backoff".split(" ");

/** Caller tokens of a soak run, and the variables that let the gateway verify them. */
export type SoakAuth = {
  env: Record<string, string>;
  /** Grants `tracefetch-admin`, which refresh needs. */
  admin: string;
  /** A valid token without it. */
  reader: string;
};

/** A key pair made for the run; the tokens outlive the run by an hour. */
export async function soakAuth(minutes: number): Promise<SoakAuth> {
  const key = await keyPair("EdDSA", "soak-1");
  const exp = Math.floor(Date.now() / 1000) + Math.ceil(minutes * 60) + 3600;
  return {
    env: {
      TRACEFETCH_AUTH_JWKS: JSON.stringify({ keys: [key.publicJwk] }),
      TRACEFETCH_AUTH_ISSUER: ISSUER,
      TRACEFETCH_AUTH_AUDIENCE: AUDIENCE,
    },
    admin: await sign(key, { scope: ADMIN_SCOPE, exp }),
    reader: await sign(key, { scope: "tracefetch:docs", exp }),
  };
}

/** What `stats` answers: requests received and answers begun but neither finished nor lost. */
export type SoakProviderStats = Record<string, { requests: number; open: number }>;

export type SoakProvidersInfo = { urls: Record<string, string> };

export function soakManifest(urls: Record<string, string>): string {
  return JSON.stringify({
    schema_version: "tracefetch.providers.v1",
    providers: SOAK_PROVIDERS.map((p) => ({
      name: p.name,
      scope: p.scope,
      endpoint: urls[p.name],
      timeout_seconds: p.timeoutSeconds,
    })),
  });
}

export const DEFAULT_MINUTES = 10;
export const DEFAULT_RATE = 40;
/** Client requests open at once; a request due while this many are open is "client saturated". */
export const CLIENT_MAX_INFLIGHT = 256;
/** Slow-body clients open at once: each holds a socket for up to the body deadline. */
export const MAX_SLOW_BODY_CLIENTS = 8;
export const MIN_TIMEOUT_MS = 500;
export const MAX_TIMEOUT_MS = 3_000;
/** A search not answered within its timeout_ms plus this is hung. */
export const HUNG_GRACE_MS = 5_000;
/** A slow-body client's 408 is due by the body deadline; later than this (plus grace) is hung. */
export const SLOW_BODY_DEADLINE_MS = DEFAULT_BODY_TIMEOUT_MS;
/** Saturation above this share of the requests due is a failure, not a blip. */
export const MAX_SATURATED_SHARE = 0.01;
/** The last minute's median RSS may exceed the baseline's by this much. */
export const MAX_RSS_GROWTH = 0.05;
/**
 * Providers close idle connections after this (Node's default), so the gateway's pool to them
 * empties once the load stops.
 */
export const PROVIDER_KEEP_ALIVE_MS = 5_000;
/**
 * After the drain, descriptors are read again once this has passed with no traffic: longer than
 * both the providers' keep-alive and the Node runtime's own (10 s), so a TCP connection still open
 * then was leaked.
 */
export const IDLE_RECHECK_MS = 11_000;
export const REPORT_EVERY_MS = 10_000;
export const RSS_SAMPLE_EVERY_MS = 1_000;
