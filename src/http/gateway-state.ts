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

export class GatewayState {
  inflight = 0;
  readonly #clients = new Map<string, ProviderClient>();
  readonly #gates = new Map<string, Semaphore>();
  readonly deps: SearchDeps;

  constructor(readonly config: ResolvedConfig) {
    this.deps = {
      manifest: config.manifest,
      maxProviders: config.maxProviders,
      // Caller tokens are not verified by this build: sensitive providers stay invisible.
      entitled: () => false,
      unavailable: (spec) => this.unavailable(spec),
      clientFor: (spec) => this.#client(spec),
      gateFor: (spec) => this.#gate(spec),
      now: config.now,
      searchBudgetBytes: config.searchBudgetBytes,
      maxPendingConnections: config.maxPendingConnections,
    };
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
        // Minting provider tokens needs a signing key, which this build does not configure.
        return "not_configured";
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
