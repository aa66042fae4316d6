/**
 * The `exa` and `github` built-ins whose keys the environment holds (EXA_API_KEY, GITHUB_TOKEN),
 * with base URL overrides checked against the loopback setting configFromEnv read.
 */
import type { SearchAdapter } from "../protocol/provider-contract.ts";
import { builtinsFromEnv, type RemoteBuiltinName } from "../transport/builtins/mod.ts";
import type { Env } from "./env-config.ts";

export function remoteBuiltins(
  env: Env,
  allowLoopback: boolean,
  fetchImpl?: typeof fetch,
): Partial<Record<RemoteBuiltinName, SearchAdapter>> {
  // builtinsFromEnv reads TRACEFETCH_ALLOW_LOOPBACK itself and knows only "1": it gets the value
  // as parsed here, so every spelling configFromEnv accepts means the same to it.
  return builtinsFromEnv(
    { ...env, TRACEFETCH_ALLOW_LOOPBACK: allowLoopback ? "1" : "0" },
    fetchImpl,
  );
}
