/**
 * The `exa` and `github` built-ins whose keys the settings hold (EXA_API_KEY, GITHUB_TOKEN, and
 * their base URLs, parsed by readSettings).
 *
 * Their code is loaded only when one of their keys is set, while the gateway is configured: never
 * by a search. On the Worker it is a module of its own (docs/deploy.md), which a deployment without
 * their keys never loads.
 */
import type { SearchAdapter } from "../protocol/provider-contract.ts";
import type { RemoteBuiltinName } from "./mod.ts";
import type { BuiltinKeys } from "./mod.ts";

export async function remoteBuiltins(
  keys: BuiltinKeys,
  fetchImpl?: typeof fetch,
): Promise<Partial<Record<RemoteBuiltinName, SearchAdapter>>> {
  if (keys.exa === null && keys.github === null) return {};
  const { builtinAdapters } = await import("./mod.ts");
  return builtinAdapters(keys, fetchImpl);
}
