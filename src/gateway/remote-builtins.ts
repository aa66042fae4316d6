/**
 * The `exa` and `github` built-ins whose keys the environment holds (EXA_API_KEY, GITHUB_TOKEN),
 * with base URL overrides checked against the loopback setting configFromEnv read.
 *
 * Their code is loaded only when one of their variables is set, while the gateway is configured:
 * never by a search. On the Worker it is a module of its own (docs/deploy.md), which a deployment
 * without their keys never loads.
 */
import type { SearchAdapter } from "../protocol/provider-contract.ts";
import { BUILTIN_VARS } from "../builtins/builtin-vars.ts";
import type { RemoteBuiltinName } from "../builtins/mod.ts";
import type { Env } from "./env-config.ts";

export async function remoteBuiltins(
  env: Env,
  allowLoopback: boolean,
  fetchImpl?: typeof fetch,
): Promise<Partial<Record<RemoteBuiltinName, SearchAdapter>>> {
  if (!Object.values(BUILTIN_VARS).some((name) => env[name]?.trim())) return {};
  const { builtinsFromEnv } = await import("../builtins/mod.ts");
  return builtinsFromEnv(env, { allowLoopback, fetch: fetchImpl });
}
