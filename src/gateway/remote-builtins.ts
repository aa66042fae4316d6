/**
 * The `exa` and `github` built-ins whose keys the environment holds (EXA_API_KEY, GITHUB_TOKEN),
 * with base URL overrides checked against the loopback setting configFromEnv read.
 */
import type { SearchAdapter } from "../protocol/provider-contract.ts";
import { builtinsFromEnv, type RemoteBuiltinName } from "../builtins/mod.ts";
import type { Env } from "./env-config.ts";

export function remoteBuiltins(
  env: Env,
  allowLoopback: boolean,
  fetchImpl?: typeof fetch,
): Partial<Record<RemoteBuiltinName, SearchAdapter>> {
  return builtinsFromEnv(env, { allowLoopback, fetch: fetchImpl });
}
