/**
 * Cloudflare Workers entry: the gateway's `fetch`, with bindings validated once per isolate. A bad
 * configuration answers every request with an internal_error envelope that says what to fix.
 */
import workspace from "tracefetch:workspace";
import bundledManifest from "tracefetch:bundled-manifest";
import { createGateway } from "../http/create-gateway.ts";
import { intSetting } from "../http/gateway-config.ts";
import { buildEnvelope } from "../envelope/build-envelope.ts";
import { envelopeResponse } from "../http/respond.ts";
import { WORKERS_MAX_PENDING_CONNECTIONS } from "../protocol/limits.ts";
import { builtinsFromEnv } from "../transport/builtins/mod.ts";

type Bindings = Record<string, unknown>;
type App = ReturnType<typeof createGateway>;

let built: { app: App } | { error: string } | null = null;

function gatewayFor(bindings: Bindings): { app: App } | { error: string } {
  if (built) return built;
  try {
    const env: Record<string, string | undefined> = {};
    for (const [key, value] of Object.entries(bindings)) {
      if (typeof value === "string") env[key] = value;
    }
    const manifest = env.TRACEFETCH_MANIFEST ?? bundledManifest;
    if (!manifest) {
      throw new Error(
        "no manifest: set the TRACEFETCH_MANIFEST var or secret, or bundle one at build time with TRACEFETCH_MANIFEST_FILE",
      );
    }
    const maxProviders = intSetting(env, "TRACEFETCH_MAX_PROVIDERS");
    const maxInflight = intSetting(env, "TRACEFETCH_MAX_INFLIGHT");
    const bodyTimeoutMs = intSetting(env, "TRACEFETCH_BODY_TIMEOUT_MS");
    built = {
      app: createGateway({
        manifest,
        allowLoopback: env.TRACEFETCH_ALLOW_LOOPBACK === "1",
        builtins: {
          ...(workspace ? { workspace } : {}),
          ...builtinsFromEnv(env),
        },
        env,
        maxPendingConnections: WORKERS_MAX_PENDING_CONNECTIONS,
        ...(maxProviders === undefined ? {} : { maxProviders }),
        ...(maxInflight === undefined ? {} : { maxInflight }),
        ...(bodyTimeoutMs === undefined ? {} : { bodyTimeoutMs }),
      }),
    };
  } catch (error) {
    built = { error: (error as Error).message };
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
