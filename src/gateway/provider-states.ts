/**
 * What `/v1/status` and `/v1/doctor` say of each provider a caller may see: whether it can be
 * contacted, its suspension, and its last health answer (a fresh one for doctor).
 */
import type { SkipReason } from "../protocol/codes.ts";
import type { ProviderState } from "../protocol/envelope-schema.ts";
import type { ProviderSpec } from "../protocol/manifest-schema.ts";
import { HEALTH_TIMEOUT_MS } from "../protocol/limits.ts";
import type { SuspensionView } from "../core/suspension.ts";
import { type Caller, GATEWAY_SUBJECT } from "../core/caller.ts";
import type { ResolvedConfig } from "../config/gateway-config.ts";
import type { HealthProbes } from "./health-probes.ts";
import { tokenHeaders } from "../config/provider-clients.ts";

/** What the view reads of the instance (GatewayState). */
export type StatusHost = {
  config: ResolvedConfig;
  visibleTo(caller: Caller): ProviderSpec[];
  unavailable(spec: ProviderSpec): SkipReason | null;
  suspensionOf(spec: ProviderSpec): Promise<SuspensionView>;
};

/** Every provider this caller may see, in manifest order; `probe` asks each for a fresh health. */
export async function providerStates(
  host: StatusHost,
  health: HealthProbes,
  caller: Caller,
  probe: boolean,
): Promise<ProviderState[]> {
  // One probe's answer is shown to every caller who may see the provider: it asks as the gateway.
  const headersFor = probe ? tokenHeaders(host.config, GATEWAY_SUBJECT) : null;
  return await Promise.all(
    host.visibleTo(caller).map(async (p): Promise<ProviderState> => {
      const reason = host.unavailable(p);
      if (reason !== null) {
        return { name: p.name, state: reason === "disabled" ? "disabled" : "not_configured" };
      }
      const held = await host.suspensionOf(p);
      const state: ProviderState = held.state === "suspended"
        ? { name: p.name, state: "suspended", until: held.until }
        : { name: p.name, state: "ready" };
      if (held.consecutiveFailures !== 0) state.consecutive_failures = held.consecutiveFailures;
      const answer = probe
        ? await health.probe(
          p,
          async () => headersFor ? await headersFor(p, HEALTH_TIMEOUT_MS) : {},
        )
        : health.cached(p.name);
      if (answer !== undefined) state.health = answer;
      return state;
    }),
  );
}
