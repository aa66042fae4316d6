/**
 * What a runtime hands to createGateway, and the checks that refuse a bad configuration at start
 * rather than on the first request.
 */
import type { BuiltinName } from "../protocol/codes.ts";
import { ConfigError } from "../protocol/config-error.ts";
import {
  HEARTBEAT_INTERVAL_MS,
  MAX_BODIES_IN_READ,
  MAX_SEARCH_BODY_BYTES,
} from "../protocol/limits.ts";
import type { Manifest } from "../protocol/manifest-schema.ts";
import {
  manifestRefusal,
  parseManifestText,
  validateManifest,
} from "../protocol/validate-manifest.ts";
import type { SearchAdapter } from "../protocol/provider-contract.ts";
import { readAuthSettings } from "../auth/auth-settings.ts";
import { type CallerVerifier, createCallerVerifier } from "../auth/verify-caller.ts";
import {
  createProviderTokenSigner,
  type ProviderTokenSigner,
} from "../auth/provider-token-signer.ts";
import { configFromEnv, type Env } from "./env-config.ts";
import { type MiningConfig, resolveMining } from "./mining/mining-config.ts";
import type { TraceSink } from "./mining/sink.ts";

export { ConfigError } from "../protocol/config-error.ts";

/**
 * Gives the script of the API reference viewer (Scalar's standalone browser bundle), read once
 * and kept; null when it is not installed where the gateway was started or, on Workers, built.
 */
export type ApiDocsViewer = () => Promise<string | null>;

/**
 * A gateway's configuration. Settings come from `env` (read by configFromEnv); a field given here
 * overrides what the environment says.
 */
export type GatewayConfig = {
  /** The manifest as JSON text or a decoded value; validated here. */
  manifest: string | unknown;
  /** Environment bindings: the TRACEFETCH_* settings, and `auth: bearer` secrets by name. */
  env?: Env | undefined;
  /** In-process adapters for the reserved names; a listed built-in without one is skipped as not_configured. */
  builtins?: Partial<Record<BuiltinName, SearchAdapter>> | undefined;
  fetch?: typeof fetch | undefined;
  now?: (() => number) | undefined;
  /** Permit http: endpoints on loopback hosts (the embedded default; else TRACEFETCH_ALLOW_LOOPBACK). */
  allowLoopback?: boolean | undefined;
  /** Else TRACEFETCH_MAX_PROVIDERS. */
  maxProviders?: number | undefined;
  /** Else TRACEFETCH_MAX_INFLIGHT. */
  maxInflight?: number | undefined;
  /** A request body must arrive within this once the app starts reading it; else TRACEFETCH_BODY_TIMEOUT_MS. */
  bodyTimeoutMs?: number | undefined;
  /** Request bodies read at once, counted apart from searches in flight. */
  maxBodiesInRead?: number | undefined;
  /** Decoded bytes one search may read across its attempts. */
  searchBudgetBytes?: number | undefined;
  /** How often a streamed search sends a heartbeat while waiting. */
  heartbeatMs?: number | undefined;
  /** Connections one search may have waiting for headers at once (6 on Workers); unbounded if absent. */
  maxPendingConnections?: number | undefined;
  /**
   * Suspend providers that keep failing (docs/protocol.md, "Suspension"); on unless false, which
   * suits a harness that sends one provider many failures on purpose.
   */
  suspendProviders?: boolean | undefined;
  /**
   * Ask each provider `describe` in the background (docs/protocol.md, "describe"); on unless
   * false, which suits a harness that counts every request a provider receives.
   */
  describeProviders?: boolean | undefined;
  /**
   * The viewer script of the API reference at /docs, which the runtime reads (Node and Deno from
   * the installed package, Workers from an extra module); absent or null, /docs is off.
   */
  apiDocs?: ApiDocsViewer | null | undefined;
  /** Told, one line each, what in an accepted configuration will not work as its author expects. */
  onWarning?: ((line: string) => void) | undefined;
  /**
   * The sink a runtime opened for TRACEFETCH_TRACE_FILE (Node, Deno) or TRACEFETCH_TRACE_QUEUE
   * (Workers); the gateway builds the webhook sink itself.
   */
  traceSink?: TraceSink | undefined;
  /** false: this gateway records no traces whatever the variables say (the CLI's in-process runs). */
  mining?: boolean | undefined;
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

/** A configuration that passed every check; each field has its final value. */
export type ResolvedConfig = {
  manifest: Manifest;
  auth: ResolvedAuth;
  builtins: Partial<Record<BuiltinName, SearchAdapter>>;
  /** The values of the secrets `auth: bearer` providers name, by variable name; unset ones absent. */
  secrets: ReadonlyMap<string, string>;
  fetch: typeof fetch;
  now: () => number;
  maxProviders: number;
  maxInflight: number;
  bodyTimeoutMs: number;
  maxBodiesInRead: number;
  searchBudgetBytes: number;
  heartbeatMs: number;
  maxPendingConnections: number | null;
  suspendProviders: boolean;
  describeProviders: boolean;
  /** Loopback http: endpoints are permitted, as in development: `/mcp` accepts loopback origins. */
  allowLoopback: boolean;
  /** The browser origins `/mcp` accepts besides loopback ones (TRACEFETCH_MCP_ORIGINS). */
  mcpOrigins: readonly string[];
  /** Search traces (docs/security.md, "Search traces"); null when no sink is configured. */
  mining: MiningConfig | null;
};

export function resolveConfig(config: GatewayConfig): ResolvedConfig {
  const env = config.env ?? {};
  const fromEnv = configFromEnv(env);
  const allowLoopback = config.allowLoopback ?? fromEnv.allowLoopback;
  const parsed = typeof config.manifest === "string"
    ? parseManifestText(config.manifest, { allowLoopback })
    : validateManifest(config.manifest, { allowLoopback });
  if (!parsed.ok) throw new ConfigError(manifestRefusal(parsed.issues));
  for (const line of manifestWarnings(parsed.manifest)) config.onWarning?.(line);
  const fetchImpl: typeof fetch = config.fetch ?? ((input, init) => fetch(input, init));
  const settings = readAuthSettings(fromEnv.auth, allowLoopback);
  const secrets = new Map<string, string>();
  for (const spec of parsed.manifest.providers) {
    if (spec.auth.type !== "bearer") continue;
    const value = env[spec.auth.secret];
    if (value) secrets.set(spec.auth.secret, value);
  }
  const signer = settings.signingJwk === null
    ? null
    : createProviderTokenSigner(settings.signingJwk);
  const mining = config.mining === false ? null : resolveMining({
    vars: fromEnv.mining,
    sink: config.traceSink,
    signer,
    allowLoopback,
    fetch: fetchImpl,
    onWarning: (line) => config.onWarning?.(line),
  });
  return {
    manifest: parsed.manifest,
    auth: {
      verifier: createCallerVerifier(settings, fetchImpl),
      signer,
      requireAuth: settings.requireAuth,
      gatewayIssuer: settings.gatewayIssuer,
    },
    builtins: config.builtins ?? {},
    secrets,
    fetch: fetchImpl,
    now: config.now ?? (() => performance.now()),
    maxProviders: positive("maxProviders", config.maxProviders, fromEnv.maxProviders),
    maxInflight: positive("maxInflight", config.maxInflight, fromEnv.maxInflight),
    bodyTimeoutMs: positive("bodyTimeoutMs", config.bodyTimeoutMs, fromEnv.bodyTimeoutMs),
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
    suspendProviders: config.suspendProviders ?? fromEnv.suspendProviders,
    describeProviders: config.describeProviders ?? fromEnv.describeProviders,
    allowLoopback,
    mcpOrigins: fromEnv.mcpOrigins,
    mining,
  };
}

/**
 * What a valid manifest will not do as its author expects, one line each: a manifest with no
 * providers starts, and then refuses every search.
 */
export function manifestWarnings(manifest: Manifest): string[] {
  return manifest.providers.length === 0
    ? [
      "the manifest declares no providers: every search will answer no_providers_selected until it lists some (docs/protocol.md)",
    ]
    : [];
}

/** A programmatic setting (the environment's are checked by configFromEnv). */
function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) {
    throw new ConfigError(`${name} must be a positive integer`);
  }
  return value;
}
