/**
 * What one gateway instance keeps between requests: a client per provider, a concurrency gate per
 * provider, and the count of searches in flight.
 */
import type { SkipReason } from "../protocol/codes.ts";
import { BUILTIN_NAMES, type BuiltinName } from "../protocol/codes.ts";
import type { ProviderSpec } from "../protocol/manifest-schema.ts";
import type { SearchDeps } from "../core/search.ts";
import { Semaphore } from "../transport/semaphore.ts";
import { httpProvider } from "../transport/http-provider.ts";
import { inProcessProvider } from "../transport/in-process-provider.ts";
import type { ProviderClient } from "../transport/provider-client.ts";
import type { ResolvedConfig } from "./gateway-config.ts";
import { ANONYMOUS, type Caller, entitlement, requiredScope, subjectOf } from "../auth/caller.ts";

export class GatewayState {
  inflight = 0;
  readonly #clients = new Map<string, ProviderClient>();
  readonly #gates = new Map<string, Semaphore>();
  readonly #deps: SearchDeps;

  constructor(readonly config: ResolvedConfig) {
    this.#deps = {
      manifest: config.manifest,
      maxProviders: config.maxProviders,
      entitlement: (spec) => entitlement(ANONYMOUS, spec),
      unavailable: (spec) => this.unavailable(spec),
      clientFor: (spec) => this.#client(spec),
      gateFor: (spec) => this.#gate(spec),
      now: config.now,
      searchBudgetBytes: config.searchBudgetBytes,
      maxPendingConnections: config.maxPendingConnections,
    };
  }

  /** The search dependencies as one caller sees them: sensitive providers only when entitled. */
  depsFor(caller: Caller): SearchDeps {
    return caller.kind === "anonymous"
      ? this.#deps
      : { ...this.#deps, entitlement: (spec) => entitlement(caller, spec) };
  }

  /** The providers this caller may see, in manifest order. */
  visibleTo(caller: Caller): ProviderSpec[] {
    return this.config.manifest.providers.filter((p) => entitlement(caller, p) === "granted");
  }

  /** Why a provider cannot be contacted with this configuration, or null when it can. */
  unavailable(spec: ProviderSpec): SkipReason | null {
    if (spec.timeout_seconds === 0) return "disabled";
    if (spec.transport === "builtin") {
      const name = spec.name as BuiltinName;
      return BUILTIN_NAMES.includes(name) && this.config.builtins[name] ? null : "not_configured";
    }
    switch (spec.auth.type) {
      case "none":
        return null;
      case "bearer":
        return this.config.env[spec.auth.secret] ? null : "not_configured";
      case "gateway-token":
        return this.config.auth.signer ? null : "not_configured";
      default: {
        const never: never = spec.auth;
        throw new Error(`unhandled auth ${JSON.stringify(never)}`);
      }
    }
  }

  #client(spec: ProviderSpec): ProviderClient {
    let client = this.#clients.get(spec.name);
    if (client) return client;
    if (spec.transport === "builtin") {
      const adapter = this.config.builtins[spec.name as BuiltinName];
      if (!adapter) throw new Error(`built-in ${spec.name} planned without an adapter`);
      client = inProcessProvider(adapter);
    } else {
      const auth = spec.auth;
      const secret = auth.type === "bearer" ? this.config.env[auth.secret] : undefined;
      client = httpProvider({
        name: spec.name,
        scope: spec.scope,
        endpoint: spec.endpoint as string,
        fetch: this.config.fetch,
        now: () => Date.now(),
        ...(secret ? { headers: () => ({ authorization: `Bearer ${secret}` }) } : {}),
      });
    }
    this.#clients.set(spec.name, client);
    return client;
  }

  #gate(spec: ProviderSpec): Semaphore {
    let gate = this.#gates.get(spec.name);
    if (!gate) {
      gate = new Semaphore(spec.max_concurrency);
      this.#gates.set(spec.name, gate);
    }
    return gate;
  }
}

/** Per-attempt headers: a provider token for `gateway-token` providers, minted for this caller. */
export function providerTokenHeaders(
  state: GatewayState,
  caller: Caller,
  origin: string,
): ((spec: ProviderSpec, budgetMs: number) => Promise<Record<string, string>>) | undefined {
  const signer = state.config.auth.signer;
  if (!signer) return undefined;
  const issuer = state.config.auth.gatewayIssuer ?? origin;
  return async (spec, budgetMs): Promise<Record<string, string>> => {
    if (spec.auth.type !== "gateway-token") return {};
    const token = await signer.mint({
      issuer,
      audience: spec.name,
      subject: subjectOf(caller),
      scope: requiredScope(spec),
      budgetMs,
    });
    return { authorization: `Bearer ${token}` };
  };
}
