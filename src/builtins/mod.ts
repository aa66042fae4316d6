/**
 * Built-ins: the in-process providers that call a third-party API, `exa` (web search) and `github`
 * (repository and issue search), created from the keys the settings hold. Each is a SearchAdapter over
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
 *   else refuses to start (checked where the settings are read, src/config/settings.ts).
 * - No message names the key.
 * - `expand` builds an upstream URL only from the validated parts of a locator of the built-in's own
 *   shape (a page URL for exa, a repository, issue or pull request URL for github); any other
 *   locator is `locator_unknown` and is sent nowhere.
 */
import type { SearchAdapter } from "../protocol/provider-contract.ts";
import { exaAdapter } from "./exa.ts";
import { githubAdapter } from "./github.ts";

export * from "./exa.ts";
export * from "./github.ts";
export { githubLocator } from "./github-answers.ts";

export type RemoteBuiltinName = "exa" | "github";

/**
 * The remote built-ins' keys as the settings parsed them (src/config/settings.ts): a built-in
 * whose key is unset has none, and is skipped as not_configured when the manifest lists it. A base
 * URL is null for the service's own.
 */
export type BuiltinKeys = {
  exa: { apiKey: string; baseUrl: string | null } | null;
  github: { token: string; baseUrl: string | null } | null;
};

/** The adapters whose keys are set; `fetch` is the client for upstream calls (else the global one). */
export function builtinAdapters(
  keys: BuiltinKeys,
  fetchImpl?: typeof fetch,
): Partial<Record<RemoteBuiltinName, SearchAdapter>> {
  const out: Partial<Record<RemoteBuiltinName, SearchAdapter>> = {};
  const client = fetchImpl ? { fetch: fetchImpl } : {};
  if (keys.exa !== null) {
    const { apiKey, baseUrl } = keys.exa;
    out.exa = exaAdapter({ apiKey, ...(baseUrl === null ? {} : { baseUrl }), ...client });
  }
  if (keys.github !== null) {
    const { token, baseUrl } = keys.github;
    out.github = githubAdapter({ token, ...(baseUrl === null ? {} : { baseUrl }), ...client });
  }
  return out;
}
