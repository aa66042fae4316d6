/**
 * `search --manifest FILE`: the core runs inside the CLI, with the workspace built-in over docs/
 * as `npm start` has it, and no server. Sensitive providers are visible only with
 * `--allow-sensitive`: the person at the terminal is the operator, as in TraceFetch 1.0.
 */
import { fileURLToPath } from "node:url";
import { loadCorpus } from "../../providers/corpus/load-corpus.ts";
import type { Envelope } from "../protocol/envelope-schema.ts";
import type { SearchRequest } from "../protocol/search-request.ts";
import { runSearch, type SearchDeps, type SearchHooks } from "../core/search.ts";
import { buildEnvelope } from "../envelope/build-envelope.ts";
import { searchEnvelope } from "../envelope/search-envelope.ts";
import { ConfigError, resolveConfig } from "../http/gateway-config.ts";
import { GatewayState, providerTokenHeaders } from "../http/gateway-state.ts";
import { ANONYMOUS, type Caller } from "../auth/caller.ts";
import { corpusAdapter } from "../transport/corpus-adapter.ts";
import { checkManifestFile, loopbackAllowed } from "./read-manifest-file.ts";
import { formatManifestIssues } from "../protocol/validate-manifest.ts";

/** Who an in-process search with --allow-sensitive acts as: the operator, granted every scope. */
const LOCAL_OPERATOR: Caller = {
  kind: "token",
  subject: "tracefetch-cli",
  scopes: new Set(["tracefetch:*"]),
};

/** The `iss` of provider tokens minted in process, unless TRACEFETCH_GATEWAY_ISSUER names one. */
const LOCAL_ISSUER = "urn:tracefetch:cli";

export type LocalSearch = {
  manifestPath: string;
  allowSensitive: boolean;
  env: Record<string, string | undefined>;
  requestId: string;
  signal: AbortSignal;
  hooks: Pick<SearchHooks, "onPlan" | "onAttempt">;
};

export async function localSearch(request: SearchRequest, options: LocalSearch): Promise<Envelope> {
  const { env, requestId } = options;
  const allowLoopback = loopbackAllowed(env);
  const checked = await checkManifestFile(options.manifestPath, allowLoopback);
  if (!checked.ok) {
    return buildEnvelope("search", checked.code, requestId, {
      error: { message: `--manifest: ${formatManifestIssues(checked.issues)}`, field: "manifest" },
    });
  }
  const usesWorkspace = checked.manifest.providers.some((p) =>
    p.name === "workspace" && p.transport === "builtin"
  );
  const docs = fileURLToPath(new URL("../../docs", import.meta.url));
  const workspace = usesWorkspace
    ? corpusAdapter("workspace", "local", await loadCorpus(docs, "docs/"))
    : undefined;
  let state: GatewayState;
  try {
    state = new GatewayState(resolveConfig({
      manifest: checked.text,
      allowLoopback,
      builtins: workspace ? { workspace } : {},
      env,
    }));
  } catch (error) {
    // The auth variables (TRACEFETCH_SIGNING_JWK, ...) are checked here, as at a gateway's start.
    if (!(error instanceof ConfigError)) throw error;
    return buildEnvelope("search", "invalid_field", requestId, {
      error: { message: error.message },
    });
  }
  const caller = options.allowSensitive ? LOCAL_OPERATOR : ANONYMOUS;
  const deps: SearchDeps = state.depsFor(caller);
  const headersFor = providerTokenHeaders(state, caller, LOCAL_ISSUER);
  const outcome = await runSearch(request, deps, requestId, options.signal, {
    ...options.hooks,
    ...(headersFor ? { headersFor } : {}),
  });
  if (!outcome.ok) {
    const { code, message, field } = outcome.problem;
    return buildEnvelope("search", code, requestId, {
      error: field === undefined ? { message } : { message, field },
    });
  }
  return searchEnvelope(outcome, requestId, request.view);
}
