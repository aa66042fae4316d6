/**
 * What a runtime hands to createGateway, and the checks that refuse a bad configuration at start
 * rather than on the first request.
 */
import type { BuiltinName } from "../protocol/codes.ts";
import {
  DEFAULT_BODY_TIMEOUT_MS,
  DEFAULT_MAX_INFLIGHT,
  DEFAULT_MAX_PROVIDERS,
  HEARTBEAT_INTERVAL_MS,
  MAX_BODIES_IN_READ,
  MAX_SEARCH_BODY_BYTES,
} from "../protocol/limits.ts";
import type { Manifest } from "../protocol/manifest-schema.ts";
import {
  formatManifestIssues,
  parseManifestText,
  validateManifest,
} from "../protocol/validate-manifest.ts";
import type { SearchAdapter } from "../transport/provider-client.ts";
import { ConfigError } from "../protocol/config-error.ts";
import { readAuthSettings } from "../auth/auth-settings.ts";
import { type CallerVerifier, createCallerVerifier } from "../auth/verify-caller.ts";
import {
  createProviderTokenSigner,
  type ProviderTokenSigner,
} from "../auth/provider-token-signer.ts";

export type GatewayConfig = {
  /** The manifest as JSON text or a decoded value; validated here. */
  manifest: string | unknown;
  /** Permit http: endpoints on loopback hosts (TRACEFETCH_ALLOW_LOOPBACK=1, or the embedded default). */
  allowLoopback?: boolean;
  /** In-process adapters for the reserved names; a listed built-in without one is skipped as not_configured. */
  builtins?: Partial<Record<BuiltinName, SearchAdapter>>;
  /** Environment bindings, read for `auth: bearer` secrets by name. */
  env?: Record<string, string | undefined>;
  fetch?: typeof fetch;
  now?: () => number;
  maxProviders?: number;
  maxInflight?: number;
  /** A request body must arrive within this once the app starts reading it (TRACEFETCH_BODY_TIMEOUT_MS). */
  bodyTimeoutMs?: number;
  /** Request bodies read at once, counted apart from searches in flight. */
  maxBodiesInRead?: number;
  searchBudgetBytes?: number;
  /** How often a streamed search sends a heartbeat while waiting. */
  heartbeatMs?: number;
  /** Connections one search may have waiting for headers at once (6 on Workers); unbounded if absent. */
  maxPendingConnections?: number;
  version?: string;
};

export type ResolvedAuth = {
  /** Verifies caller tokens; null when no key source is configured (every caller is anonymous). */
  verifier: CallerVerifier | null;
  /** Mints provider tokens; null without TRACEFETCH_SIGNING_JWK (gateway-token providers are skipped). */
  signer: ProviderTokenSigner | null;
  requireAuth: boolean;
  /** `iss` of provider tokens; null: the gateway's own origin, per request. */
  gatewayIssuer: string | null;
};

export type ResolvedConfig = {
  manifest: Manifest;
  auth: ResolvedAuth;
  builtins: Partial<Record<BuiltinName, SearchAdapter>>;
  env: Record<string, string | undefined>;
  fetch: typeof fetch;
  now: () => number;
  maxProviders: number;
  maxInflight: number;
  bodyTimeoutMs: number;
  maxBodiesInRead: number;
  searchBudgetBytes: number;
  heartbeatMs: number;
  maxPendingConnections: number | null;
  version: string;
};

export { ConfigError } from "../protocol/config-error.ts";

export function resolveConfig(config: GatewayConfig): ResolvedConfig {
  const options = { allowLoopback: config.allowLoopback ?? false };
  const parsed = typeof config.manifest === "string"
    ? parseManifestText(config.manifest, options)
    : validateManifest(config.manifest, options);
  if (!parsed.ok) throw new ConfigError(`invalid manifest: ${formatManifestIssues(parsed.issues)}`);
  const fetchImpl: typeof fetch = config.fetch ?? ((input, init) => fetch(input, init));
  const settings = readAuthSettings(config.env ?? {}, options.allowLoopback);
  return {
    manifest: parsed.manifest,
    auth: {
      verifier: createCallerVerifier(settings, fetchImpl),
      signer: settings.signingJwk === null ? null : createProviderTokenSigner(settings.signingJwk),
      requireAuth: settings.requireAuth,
      gatewayIssuer: settings.gatewayIssuer,
    },
    builtins: config.builtins ?? {},
    env: config.env ?? {},
    fetch: fetchImpl,
    now: config.now ?? (() => performance.now()),
    maxProviders: positive("TRACEFETCH_MAX_PROVIDERS", config.maxProviders, DEFAULT_MAX_PROVIDERS),
    maxInflight: positive("TRACEFETCH_MAX_INFLIGHT", config.maxInflight, DEFAULT_MAX_INFLIGHT),
    bodyTimeoutMs: positive(
      "TRACEFETCH_BODY_TIMEOUT_MS",
      config.bodyTimeoutMs,
      DEFAULT_BODY_TIMEOUT_MS,
    ),
    maxBodiesInRead: positive("maxBodiesInRead", config.maxBodiesInRead, MAX_BODIES_IN_READ),
    searchBudgetBytes: positive(
      "searchBudgetBytes",
      config.searchBudgetBytes,
      MAX_SEARCH_BODY_BYTES,
    ),
    heartbeatMs: positive("heartbeatMs", config.heartbeatMs, HEARTBEAT_INTERVAL_MS),
    maxPendingConnections: config.maxPendingConnections === undefined
      ? null
      : positive("maxPendingConnections", config.maxPendingConnections, 1),
    version: config.version ?? "0.1.0",
  };
}

/** Reads a positive integer setting from the environment, refusing anything else at start. */
export function intSetting(
  env: Record<string, string | undefined>,
  name: string,
): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === "") return undefined;
  if (!/^\d+$/.test(raw.trim())) {
    throw new ConfigError(`${name} must be a positive integer, got "${raw}"`);
  }
  return Number(raw.trim());
}

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) {
    throw new ConfigError(`${name} must be a positive integer`);
  }
  return value;
}
