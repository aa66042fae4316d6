/**
 * commandFailure: how a command provider's child that gave no answer fails, in the provider
 * protocol's codes, for an adapter that runs a program (providers/command-bridge).
 */
import { ProviderError } from "../protocol/provider-contract.ts";

/**
 * A command provider's child that gave no answer: it could not start (`spawnError`, with the
 * executable as the manifest wrote it), or it exited otherwise than with 0. A missing or unrunnable
 * executable means the provider is not there: `adapter_unavailable`.
 */
export function commandFailure(
  ended:
    | { spawnError: unknown; command: string }
    | { exitCode: number | null; killedBy: string | null; stderr: string },
): ProviderError {
  if ("spawnError" in ended) {
    const code = (ended.spawnError as { code?: unknown } | null)?.code;
    const exe = ended.command;
    if (code === "ENOENT") {
      return new ProviderError("adapter_unavailable", `the command ${exe} was not found (ENOENT)`);
    }
    if (code === "EACCES" || code === "ENOEXEC" || code === "EISDIR") {
      return new ProviderError("adapter_unavailable", `the command ${exe} cannot be run (${code})`);
    }
    const detail = typeof code === "string" ? code : "spawn failed";
    return new ProviderError("search_failed", `the command ${exe} could not start (${detail})`);
  }
  const how = ended.exitCode === null ? `killed by ${ended.killedBy}` : `exit ${ended.exitCode}`;
  return new ProviderError("search_failed", ended.stderr ? `${how}: ${ended.stderr}` : how);
}
