/**
 * Built-ins: the in-process providers that call a third-party API, `exa` (web search) and `github`
 * (repository and issue search), created from environment bindings. Each is a SearchAdapter over
 * the upstream helper (src/transport/upstream.ts), the same one an example provider uses. The
 * `workspace` built-in is the corpus engine of providers/corpus, built by the composition roots.
 *
 * Boundary: this only builds adapters. Whether one runs is the manifest's decision
 * (docs/protocol.md): a built-in runs only when the manifest lists its reserved name, and a key in
 * the environment alone never sends a query anywhere. A listed built-in without its key is skipped
 * as `not_configured`.
 *
 * Invariants:
 * - An adapter exists only when its key is set; the key is sent only to its base URL.
 * - A base URL override is https, or http to a loopback host when loopback is allowed; anything
 *   else refuses to start.
 * - No message names the key.
 * - `expand` builds an upstream URL only from the validated parts of a locator of the built-in's own
 *   shape (a page URL for exa, a repository, issue or pull request URL for github); any other
 *   locator is `locator_unknown` and is sent nowhere.
 */
import { ConfigError } from "../protocol/config-error.ts";
import type { SearchAdapter } from "../protocol/provider-contract.ts";
import { baseUrlProblem } from "../transport/upstream.ts";
import { BUILTIN_VARS } from "./builtin-vars.ts";
import { EXA_DEFAULT_BASE_URL, exaAdapter } from "./exa.ts";
import { GITHUB_DEFAULT_BASE_URL, githubAdapter } from "./github.ts";

export * from "./exa.ts";
export * from "./github.ts";

export type RemoteBuiltinName = "exa" | "github";

export type BuiltinsOptions = {
  /** Whether a base URL may be http: on a loopback host: TRACEFETCH_ALLOW_LOOPBACK as parsed. */
  allowLoopback: boolean;
  /** The client for upstream calls; the global fetch when absent. */
  fetch?: typeof fetch | undefined;
};

/**
 * The adapters whose keys are set: `EXA_API_KEY` (and `EXA_BASE_URL`), `GITHUB_TOKEN` (and
 * `GITHUB_API_URL`). Throws ConfigError for an invalid base URL or key.
 */
export function builtinsFromEnv(
  env: Record<string, string | undefined>,
  options: BuiltinsOptions,
): Partial<Record<RemoteBuiltinName, SearchAdapter>> {
  const { allowLoopback, fetch: fetchImpl } = options;
  const exaBase = baseUrl(env, BUILTIN_VARS.exaBaseUrl, EXA_DEFAULT_BASE_URL, allowLoopback);
  const githubBase = baseUrl(
    env,
    BUILTIN_VARS.githubBaseUrl,
    GITHUB_DEFAULT_BASE_URL,
    allowLoopback,
  );
  const out: Partial<Record<RemoteBuiltinName, SearchAdapter>> = {};
  const exaKey = secret(env, BUILTIN_VARS.exaKey);
  if (exaKey !== null) {
    out.exa = exaAdapter({
      apiKey: exaKey,
      baseUrl: exaBase,
      ...(fetchImpl ? { fetch: fetchImpl } : {}),
    });
  }
  const githubToken = secret(env, BUILTIN_VARS.githubToken);
  if (githubToken !== null) {
    out.github = githubAdapter({
      token: githubToken,
      baseUrl: githubBase,
      ...(fetchImpl ? { fetch: fetchImpl } : {}),
    });
  }
  return out;
}

/** A key's value, trimmed; null when unset or blank. */
function secret(env: Record<string, string | undefined>, name: string): string | null {
  const value = env[name]?.trim();
  if (!value) return null;
  // A header cannot carry control characters; say so here rather than fail every search later.
  // deno-lint-ignore no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(value)) {
    throw new ConfigError(`${name} contains a control character; set the key alone`);
  }
  return value;
}

/**
 * Validated even when the key is unset: a mistyped override is worth refusing before anyone adds a
 * key. The message does not echo the value, which might carry credentials.
 */
function baseUrl(
  env: Record<string, string | undefined>,
  name: string,
  fallback: string,
  allowLoopback: boolean,
): string {
  const value = env[name]?.trim();
  if (!value) return fallback;
  const problem = baseUrlProblem(value, allowLoopback);
  if (problem) throw new ConfigError(`${name} ${problem}`);
  return value;
}
