/**
 * Cloudflare Workers entry: the gateway's `fetch`, with bindings validated once per isolate. A bad
 * configuration answers every request with an internal_error envelope that says what to fix.
 */
import workspace from "tracefetch:workspace";
import bundledManifest from "tracefetch:bundled-manifest";
import { createGateway } from "../http/create-gateway.ts";
import { envelopeResponse } from "../http/respond.ts";
import { configFromEnv } from "../gateway/env-config.ts";
import { remoteBuiltins } from "../gateway/remote-builtins.ts";
import { buildEnvelope } from "../envelope/build-envelope.ts";
import { WORKERS_MAX_PENDING_CONNECTIONS } from "../protocol/limits.ts";

type Bindings = Record<string, unknown>;
type App = ReturnType<typeof createGateway>;

let built: { app: App } | { error: string } | null = null;

function gatewayFor(bindings: Bindings): { app: App } | { error: string } {
  if (built) return built;
  try {
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(bindings)) {
      if (typeof value === "string") env[key] = value;
    }
    const settings = configFromEnv(env);
    const manifest = settings.manifest ?? bundledManifest;
    if (!manifest) {
      throw new Error(
        "no manifest: set the TRACEFETCH_MANIFEST var or secret, or bundle one at build time with TRACEFETCH_MANIFEST_FILE",
      );
    }
    built = {
      app: createGateway({
        manifest,
        env,
        builtins: {
          ...(workspace ? { workspace } : {}),
          ...remoteBuiltins(env, settings.allowLoopback),
        },
        maxPendingConnections: WORKERS_MAX_PENDING_CONNECTIONS,
        onWarning: (line) => console.warn(`tracefetch: warning: ${line}`),
      }),
    };
  } catch (error) {
    // An envelope's message is one line: a refusal with a line per problem is joined by "; ".
    built = {
      error: (error as Error).message.replace(/:\n\s*/, ": ").replace(/\n\s*/g, "; "),
    };
    console.error(`tracefetch: configuration refused: ${built.error}`);
  }
  return built;
}

export default {
  fetch(request: Request, bindings: Bindings, context: unknown): Response | Promise<Response> {
    const gateway = gatewayFor(bindings);
    if ("app" in gateway) return gateway.app.fetch(request, bindings, context as never);
    const requestId = crypto.randomUUID();
    return envelopeResponse(buildEnvelope("unknown", "internal_error", requestId, {
      error: { message: `the gateway's configuration was refused: ${gateway.error}` },
    }));
  },
};
