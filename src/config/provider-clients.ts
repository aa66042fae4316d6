/**
 * How this configuration reaches one provider: whether it can at all, and the client that does
 * (in process for a built-in, an MCP tool for `transport: "mcp"`, over HTTP otherwise), and the token it carries when it takes one.
 * GatewayState keeps one client and one concurrency gate per provider (ProviderLinks).
 */
import { BUILTIN_NAMES, type BuiltinName, type SkipReason } from "../protocol/codes.ts";
import type { ProviderSpec } from "../protocol/manifest-schema.ts";
import { httpProvider } from "../transport/http-provider.ts";
import { inProcessProvider } from "../transport/in-process-provider.ts";
import { VERSION } from "../protocol/version.ts";
import type { ProviderClient } from "../transport/provider-client.ts";
import { Semaphore } from "../io/gate.ts";
import type { SearchDeps } from "../core/search.ts";
import { requiredScope } from "../core/caller.ts";
import { lazy } from "../core/lazy-module.ts";
import type { ResolvedConfig } from "./gateway-config.ts";

/** Why a provider cannot be contacted with this configuration, or null when it can. */
export function unavailableIn(config: ResolvedConfig, spec: ProviderSpec): SkipReason | null {
  if (spec.timeout_seconds === 0) return "disabled";
  if (spec.transport === "builtin") {
    const name = spec.name as BuiltinName;
    return BUILTIN_NAMES.includes(name) && config.builtins[name] ? null : "not_configured";
  }
  switch (spec.auth.type) {
    case "none":
      return null;
    case "bearer":
      return config.secrets.has(spec.auth.secret) ? null : "not_configured";
    case "gateway-token":
      return config.auth.signer ? null : "not_configured";
    default: {
      const never: never = spec.auth;
      throw new Error(`unhandled auth ${JSON.stringify(never)}`);
    }
  }
}

/** A new client for a provider this configuration can contact. */
export function clientFor(config: ResolvedConfig, spec: ProviderSpec): ProviderClient {
  if (spec.transport === "builtin") {
    const adapter = config.builtins[spec.name as BuiltinName];
    if (!adapter) throw new Error(`built-in ${spec.name} planned without an adapter`);
    return inProcessProvider(adapter);
  }
  const secret = spec.auth.type === "bearer" ? config.secrets.get(spec.auth.secret) : undefined;
  if (spec.transport === "mcp" && spec.mcp !== undefined) {
    const mapping = spec.mcp;
    return madeOnFirstCall(async () =>
      (await mcpTransport()).mcpProvider({
        name: spec.name,
        scope: spec.scope,
        endpoint: spec.endpoint as string,
        mapping,
        clientVersion: VERSION,
        exchange: config.exchange,
        now: config.wallClock,
        ...(secret ? { headers: () => ({ authorization: `Bearer ${secret}` }) } : {}),
      })
    );
  }
  return httpProvider({
    name: spec.name,
    scope: spec.scope,
    endpoint: spec.endpoint as string,
    exchange: config.exchange,
    now: config.wallClock,
    ...(secret ? { headers: () => ({ authorization: `Bearer ${secret}` }) } : {}),
  });
}

/**
 * The MCP transport, loaded with the first call of an MCP provider: on Workers a module of its own,
 * so a manifest without one never loads it and the worker's main module keeps its budget.
 */
const mcpTransport = lazy(() => import("../transport/mcp-provider.ts"));

/**
 * A client made with its first call, once: every call then goes to that one client (an MCP
 * client keeps its session). A failed making is tried again by the next call.
 */
function madeOnFirstCall(make: () => Promise<ProviderClient>): ProviderClient {
  const client = lazy(make);
  return {
    call: async (call) => (await client()).call(call),
    describe: async (call) => (await client()).describe(call),
    health: async (call) => (await client()).health(call),
    expand: async (request, call) => (await client()).expand(request, call),
    refresh: async (call) => (await client()).refresh(call),
    stats: async (request, call) => (await client()).stats(request, call),
  };
}

/**
 * Per-attempt headers: a token for each `gateway-token` provider, minted for this subject with
 * the configured issuer (TRACEFETCH_GATEWAY_ISSUER), never one a request names; null when this
 * gateway signs nothing.
 */
export function tokenHeaders(config: ResolvedConfig, subject: string): SearchDeps["headersFor"] {
  const { signer, gatewayIssuer: issuer } = config.auth;
  if (signer === null || issuer === null) return null;
  return async (spec, budgetMs): Promise<Record<string, string>> => {
    if (spec.auth.type !== "gateway-token") return {};
    const token = await signer.mint({
      issuer,
      audience: spec.name,
      subject,
      scope: requiredScope(spec),
      budgetMs,
    });
    return { authorization: `Bearer ${token}` };
  };
}

/**
 * One client and one gate per provider, made when first needed: every search, probe and action
 * of the instance goes through the same `max_concurrency` gate.
 */
export class ProviderLinks {
  readonly #clients = new Map<string, ProviderClient>();
  readonly #gates = new Map<string, Semaphore>();

  constructor(private readonly config: ResolvedConfig) {}

  client(spec: ProviderSpec): ProviderClient {
    let client = this.#clients.get(spec.name);
    if (client === undefined) {
      client = clientFor(this.config, spec);
      this.#clients.set(spec.name, client);
    }
    return client;
  }

  gate(spec: ProviderSpec): Semaphore {
    let gate = this.#gates.get(spec.name);
    if (gate === undefined) {
      gate = new Semaphore(spec.max_concurrency);
      this.#gates.set(spec.name, gate);
    }
    return gate;
  }
}
