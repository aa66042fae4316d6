/**
 * `search --manifest FILE`: the gateway's search runs inside the CLI, with the workspace built-in
 * over docs/ and the `exa` and `github` built-ins whose keys are set, as `npm start` has them, and
 * no server. Sensitive providers are visible only with `--allow-sensitive`: the person at the
 * terminal is the operator, as in TraceFetch 1.0.
 */
import { fileURLToPath } from "node:url";
import { corpusAdapter } from "../../providers/corpus/corpus-adapter.ts";
import { loadCorpus } from "../../providers/corpus/load-corpus.ts";
import type { Command } from "../protocol/codes.ts";
import type { Envelope } from "../protocol/envelope-schema.ts";
import type { SearchRequest } from "../protocol/search-request.ts";
import { formatManifestIssues } from "../protocol/validate-manifest.ts";
import { problemEnvelope } from "../envelope/build-envelope.ts";
import { ConfigError } from "../protocol/config-error.ts";
import type { ReadSettings } from "../config/settings.ts";
import { resolveConfig } from "../config/gateway-config.ts";
import { GatewayState } from "../gateway/gateway-state.ts";
import type { RunOptions, SearchAsk } from "../gateway/search-run.ts";
import { remoteBuiltins } from "../builtins/remote-builtins.ts";
import { checkManifestFile } from "./read-manifest-file.ts";

/** Who an in-process search with --allow-sensitive acts as: the operator, granted every scope. */
export const LOCAL_OPERATOR: SearchAsk["caller"] = {
  kind: "token",
  subject: "tracefetch-cli",
  scopes: new Set(["tracefetch:*"]),
};

/** Who an in-process search without --allow-sensitive acts as: nobody's token. */
export const LOCAL_ANONYMOUS: SearchAsk["caller"] = { kind: "anonymous" };

/** The client an in-process search counts as for caller limits: the operator at this terminal. */
export const LOCAL_CLIENT = "local";

/** The `iss` of provider tokens minted in process, unless TRACEFETCH_GATEWAY_ISSUER names one. */
export const LOCAL_ISSUER = "urn:tracefetch:cli";

export type LocalSearch = {
  manifestPath: string;
  allowSensitive: boolean;
  /** Parses the environment (ctx.settings); called once, and a refused variable is an envelope. */
  settings: () => ReadSettings;
  requestId: string;
  signal: AbortSignal;
  hooks: Omit<RunOptions, "signal" | "later">;
};

export async function localSearch(request: SearchRequest, options: LocalSearch): Promise<Envelope> {
  const { requestId } = options;
  const state = await localGateway(options, "search");
  if (!state.ok) return state.envelope;
  return await state.gateway.search({
    request,
    caller: options.allowSensitive ? LOCAL_OPERATOR : LOCAL_ANONYMOUS,
    client: LOCAL_CLIENT,
    requestId,
  }, { signal: options.signal, ...options.hooks });
}

/**
 * The gateway a `tracefetch serve` with this manifest and environment would run, or why not (an
 * envelope of `command`). It records no traces: an in-process search is the operator's own.
 */
export async function localGateway(
  options:
    & Pick<LocalSearch, "settings" | "requestId">
    & (
      | { manifestPath: string }
      /** The embedded default's manifest (its providers on loopback), as `npm start` runs it. */
      | { embeddedManifest: unknown }
    ),
  command: Command,
): Promise<{ ok: true; gateway: GatewayState } | { ok: false; envelope: Envelope }> {
  const { requestId } = options;
  try {
    // The variables are checked here as at a gateway's start (TRACEFETCH_ALLOW_LOOPBACK, the auth
    // variables, EXA_API_KEY, ...); a refused one names itself.
    const read = options.settings();
    let settled;
    if ("embeddedManifest" in options) {
      settled = read.withManifest({ value: options.embeddedManifest, loopback: true });
    } else {
      const checked = await checkManifestFile(options.manifestPath, read.env.allowLoopback);
      if (!checked.ok) {
        const message = `--manifest: ${formatManifestIssues(checked.issues)}`;
        return {
          ok: false,
          envelope: problemEnvelope(command, checked.code, requestId, message, "manifest"),
        };
      }
      settled = read.withManifest({ validated: checked.manifest });
    }
    const usesWorkspace = settled.manifest.providers.some((p) =>
      p.name === "workspace" && p.transport === "builtin"
    );
    const docs = fileURLToPath(new URL("../../docs", import.meta.url));
    const workspace = usesWorkspace
      ? corpusAdapter("workspace", "local", await loadCorpus(docs, "docs/"), {
        reload: () => loadCorpus(docs, "docs/"),
      })
      : undefined;
    const { auth } = settled;
    const settings = {
      ...settled,
      // An in-process search is the operator's own: it records no traces, and its provider
      // tokens name the CLI as their issuer unless TRACEFETCH_GATEWAY_ISSUER names another.
      mining: null,
      auth: auth.signingJwk === null
        ? auth
        : { ...auth, gatewayIssuer: auth.gatewayIssuer ?? LOCAL_ISSUER },
    };
    const config = resolveConfig(settings, {
      builtins: {
        ...await remoteBuiltins(settings.builtins),
        ...(workspace ? { workspace } : {}),
      },
    });
    return { ok: true, gateway: new GatewayState(config) };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return {
      ok: false,
      envelope: problemEnvelope(command, "invalid_field", requestId, error.message),
    };
  }
}
