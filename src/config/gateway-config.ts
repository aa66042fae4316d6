/**
 * What a composition root hands to createGateway besides its Settings: the runtime's ports, how
 * this gateway reaches the world. With them the configuration is resolved once (keys imported,
 * the trace sink chosen), and a configuration that cannot work is refused at start rather than on
 * the first request.
 */
import type { BuiltinName } from "../protocol/codes.ts";
import type { Manifest } from "../protocol/manifest-schema.ts";
import type { SearchAdapter } from "../protocol/provider-contract.ts";
import { exchangeOverFetch, type ProviderExchange } from "../io/provider-exchange.ts";
import { readAuthSettings } from "./auth-settings.ts";
import { type CallerVerifier, createCallerVerifier } from "../auth/verify-caller.ts";
import {
  createProviderTokenSigner,
  type ProviderTokenSigner,
} from "../auth/provider-token-signer.ts";
import type { Settings } from "./settings.ts";
import { type MiningConfig, resolveMining } from "./mining-config.ts";
import type { TraceSink } from "../protocol/trace-sink.ts";
import type { SharedState } from "../state/shared-state.ts";
import type { AnswerCache } from "../state/answer-cache.ts";
import { MemoryState } from "../state/memory-state.ts";
import { NO_TELEMETRY, type Telemetry } from "../core/telemetry.ts";

/**
 * Gives the script of the API reference viewer (Scalar's standalone browser bundle), read once
 * and kept; null when it is not installed where the gateway was started or, on Workers, built.
 */
export type ApiDocsViewer = () => Promise<string | null>;

/** How one gateway reaches the world; every port has a Web-standard default. */
export type Ports = {
  /** For documents a third party serves (a JWKS) and the webhook trace sink; else the global fetch. */
  fetch?: typeof fetch | undefined;
  /** The one exchange with a provider (docs/architecture.md); else one over `fetch`. */
  exchange?: ProviderExchange | undefined;
  /** A monotonic clock in milliseconds, for deadlines and TTLs; else performance.now. */
  now?: (() => number) | undefined;
  /** The wall clock, epoch milliseconds, for times callers read (RFC 3339); else Date.now. */
  wallClock?: (() => number) | undefined;
  /** What this instance shares with the others (src/state); else its own memory. */
  state?: SharedState | undefined;
  /** Where providers' answers are cached (Redis); else this instance's memory, when any is. */
  answerCache?: AnswerCache | undefined;
  /** In-process adapters for the reserved names; a listed built-in without one is skipped as not_configured. */
  builtins?: Partial<Record<BuiltinName, SearchAdapter>> | undefined;
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
  /**
   * The address of the peer a request came from, as the runtime's server knows it: the socket's on
   * Node and Deno, CF-Connecting-IP on Workers. It is given the request and what the server handed
   * the app beside it (Hono's `c.env`). Absent, or null for a request: the address is unknown.
   */
  peerAddress?: PeerAddress | undefined;
  /**
   * Metrics (`GET /metrics`) and traces (OTLP/HTTP) the root built from the settings
   * (src/observe); absent, the gateway keeps neither.
   */
  telemetry?: Telemetry | undefined;
};

/** Reads the peer's address of a request (Ports, `peerAddress`); null when it is not known. */
export type PeerAddress = (request: Request, server: unknown) => string | null;

export type ResolvedAuth = {
  /** Verifies caller tokens; null when no key source is configured (every caller is anonymous). */
  verifier: CallerVerifier | null;
  /** Mints provider tokens; null without TRACEFETCH_SIGNING_JWK (gateway-token providers are skipped). */
  signer: ProviderTokenSigner | null;
  requireAuth: boolean;
  /** `iss` of provider tokens (TRACEFETCH_GATEWAY_ISSUER); null only when nothing is signed. */
  gatewayIssuer: string | null;
};

/** A configuration that passed every check; each field has its final value. */
export type ResolvedConfig =
  & Omit<
    Settings,
    "mining" | "auth" | "builtins" | "state" | "telemetry"
  >
  & {
    auth: ResolvedAuth;
    builtins: Partial<Record<BuiltinName, SearchAdapter>>;
    fetch: typeof fetch;
    exchange: ProviderExchange;
    now: () => number;
    wallClock: () => number;
    state: SharedState;
    /** The runtime's answer cache; null: one in memory, made when a provider caches. */
    answerCache: AnswerCache | null;
    peerAddress: PeerAddress;
    /** Search traces (docs/security.md, "Search traces"); null when no sink is configured. */
    mining: MiningConfig | null;
    /** Metrics and traces; either part null when off. */
    telemetry: Telemetry;
  };

export function resolveConfig(settings: Settings, ports: Ports = {}): ResolvedConfig {
  const onWarning = (line: string) => ports.onWarning?.(line);
  for (const line of [...settings.warnings, ...manifestWarnings(settings.manifest)]) {
    onWarning(line);
  }
  const fetchImpl: typeof fetch = ports.fetch ?? ((input, init) => fetch(input, init));
  const { allowLoopback } = settings;
  const auth = readAuthSettings(settings.auth, allowLoopback);
  const signer = auth.signingJwk === null ? null : createProviderTokenSigner(auth.signingJwk);
  const mining = settings.mining === null ? null : resolveMining({
    vars: settings.mining,
    sink: ports.traceSink,
    signer,
    allowLoopback,
    fetch: fetchImpl,
    onWarning,
  });
  const { auth: _variables, builtins: _keys, state: _store, telemetry: _otel, ...rest } = settings;
  const now = ports.now ?? (() => performance.now());
  const wallClock = ports.wallClock ?? (() => Date.now());
  return {
    ...rest,
    auth: {
      verifier: createCallerVerifier(auth, fetchImpl),
      signer,
      requireAuth: auth.requireAuth,
      gatewayIssuer: auth.gatewayIssuer,
    },
    builtins: ports.builtins ?? {},
    fetch: fetchImpl,
    exchange: ports.exchange ?? exchangeOverFetch(fetchImpl),
    now,
    wallClock,
    state: ports.state ?? new MemoryState({ now, wall: wallClock }),
    answerCache: ports.answerCache ?? null,
    peerAddress: ports.peerAddress ?? (() => null),
    mining,
    telemetry: ports.telemetry ?? NO_TELEMETRY,
  };
}

/**
 * What a valid manifest will not do as its author expects, one line each: a manifest with no
 * providers starts, and then refuses every search.
 */
function manifestWarnings(manifest: Manifest): string[] {
  return manifest.providers.length === 0
    ? [
      "the manifest declares no providers: every search will answer no_providers_selected until it lists some (docs/protocol.md)",
    ]
    : [];
}
