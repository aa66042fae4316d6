/**
 * Cloudflare Workers entry: the gateway's `fetch`, with bindings validated once per isolate, on its
 * first request (loading the remote built-ins' module when their keys are set). A bad
 * configuration answers every request with an internal_error envelope that says what to fix.
 * The main module also exports GatewayStateObject, the Durable Object class the TRACEFETCH_STATE
 * binding names: bound, it is the state this isolate shares with the others.
 */
import workspace from "tracefetch:workspace";
import bundledManifest from "tracefetch:bundled-manifest";
import bundledViewer from "tracefetch:api-docs-viewer";
import { createGateway } from "../http/create-gateway.ts";
import { problemResponse } from "../http/respond.ts";
import { type EnvSettings, readSettings, type SettingsReaders } from "../config/settings.ts";
import { lazy } from "../core/lazy-module.ts";
import type { EvidencePorts } from "../http/fetch-route.ts";
import { requireStateSecret } from "../config/state-settings.ts";
import { ConfigError } from "../protocol/config-error.ts";
import { remoteBuiltins } from "../builtins/remote-builtins.ts";
import { WORKERS_MAX_PENDING_CONNECTIONS } from "../protocol/limits.ts";

export { GatewayStateObject } from "./state-object.ts";

type Bindings = Record<string, unknown>;
type App = ReturnType<typeof createGateway>;
type Flush = (() => Promise<void>) | null;

type Built = { app: App; flush: Flush } | { error: string };

/**
 * /docs's viewer script, a module of its own (1 MB gzipped) in a build made with
 * TRACEFETCH_API_DOCS=1; a build without it answers /docs with the 404 saying so.
 */
const apiDocsViewer = bundledViewer ?? (() => Promise.resolve(null));

/** The configured gateway, once this isolate has one; until then the configuration in progress. */
let built: Built | null = null;
let building: Promise<Built> | null = null;

async function gatewayFor(bindings: Bindings): Promise<Built> {
  try {
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(bindings)) {
      if (typeof value === "string") env[key] = value;
    }
    for (const name of ["TRACEFETCH_STATE_URL", "TRACEFETCH_CACHE_URL"]) {
      if (env[name]?.trim()) {
        throw new ConfigError(
          `${name} names a Redis, which Workers cannot reach; bind the TRACEFETCH_STATE Durable Object namespace instead (docs/deploy.md)`,
        );
      }
    }
    // ipaddr.js (CommonJS, about 4 KiB gzipped) stays out of the main module: it loads only when
    // a setting lists addresses for it to read.
    const read = readSettings(
      env,
      env.TRACEFETCH_TRUSTED_PROXIES?.trim() ? await addressReaders() : {},
    );
    const manifest = read.env.manifest ?? bundledManifest;
    if (!manifest) {
      throw new Error(
        "no manifest: set the TRACEFETCH_MANIFEST var or secret, or bundle one at build time with TRACEFETCH_MANIFEST_FILE",
      );
    }
    const withRanges = listsFetchRanges(manifest)
      ? readSettings(env, await addressReaders())
      : read;
    const settings = {
      ...withRanges.withManifest({ text: manifest }),
      maxPendingConnections: WORKERS_MAX_PENDING_CONNECTIONS,
    };
    // Traces only when an OTLP endpoint is set: the SDK is a module of its own (docs/deploy.md).
    const { tracesEndpoint, metricsEndpoint } = read.env.telemetry;
    const observed = tracesEndpoint === null && metricsEndpoint === null
      ? null
      : (await import("../observe/worker-telemetry.ts")).workerTelemetry(
        read.env.telemetry,
        settings.mining?.rawQueries ?? false,
      );
    return {
      flush: observed?.flush ?? null,
      app: createGateway(settings, {
        telemetry: observed?.telemetry,
        traceSink: await queueSinkFor(settings.mining?.queue ?? null, bindings),
        builtins: {
          ...(workspace ? { workspace } : {}),
          ...await remoteBuiltins(settings.builtins),
        },
        apiDocs: settings.apiDocs === true ? apiDocsViewer : null,
        onWarning: (line) => console.warn(`tracefetch: warning: ${line}`),
        // Cloudflare's edge sets it to the address that connected to it; a caller cannot.
        peerAddress: (request) => request.headers.get("cf-connecting-ip"),
        // Names resolved over DNS-over-HTTPS, pages sent by name (docs/security.md).
        evidence: workerFetchPartsOnDemand(),
        ...await sharedStateFor(bindings, read.env),
      }),
    };
  } catch (error) {
    // An envelope's message is one line: a refusal with a line per problem is joined by "; ".
    const refused = {
      error: (error as Error).message.replace(/:\n\s*/, ": ").replace(/\n\s*/g, "; "),
    };
    console.error(`tracefetch: configuration refused: ${refused.error}`);
    return refused;
  }
}

/** worker-evidence.ts, a module of its own: its code loads with the first page fetched. */
const workerEvidence = lazy(() => import("./worker-evidence.ts"));

/** Workers' resolver and connector (worker-evidence.ts), each loading it when first called. */
function workerFetchPartsOnDemand(): EvidencePorts {
  const parts = lazy(async () => (await workerEvidence()).workerFetchParts());
  return {
    resolve: async (host, signal) => (await parts()).resolve(host, signal),
    connector: {
      // As worker-evidence.ts's: Workers' fetch resolves the name again, so it cannot pin.
      pinsAddress: false,
      send: async (request) => (await parts()).connector.send(request),
    },
  };
}

/** src/io/ip-rules.ts's parseCidr, a module of its own with ipaddr.js. */
const ipRules = lazy(() => import("../io/ip-rules.ts"));

async function addressReaders(): Promise<SettingsReaders> {
  return { parseCidr: (await ipRules()).parseCidr };
}

/**
 * Whether the manifest's `fetch` block lists private ranges, which only parseCidr can check: read
 * as the manifest's reader reads it (a byte-order mark skipped); text that is not JSON lists none,
 * and is refused as it would be anyway.
 */
function listsFetchRanges(text: string): boolean {
  if (!text.includes("cidrs") && !text.includes("\\u")) return false;
  try {
    const json: unknown = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    const ranges = (json as { fetch?: { allow_private_cidrs?: unknown } } | null)?.fetch
      ?.allow_private_cidrs;
    return Array.isArray(ranges) && ranges.length > 0;
  } catch {
    return false;
  }
}

/**
 * The Queue sink for the binding TRACEFETCH_TRACE_QUEUE names; its code is a module of its own,
 * loaded only when the variable is set.
 */
async function queueSinkFor(name: string | null, bindings: Bindings) {
  if (name === null) return undefined;
  const { isQueueBinding, queueSink } = await import("../gateway/mining/queue-sink.ts");
  const binding = bindings[name];
  if (!isQueueBinding(binding)) {
    throw new Error(
      `TRACEFETCH_TRACE_QUEUE names "${name}", but this Worker has no Queue binding of that name (wrangler.toml, [[queues.producers]])`,
    );
  }
  return queueSink(binding);
}

/**
 * The state and the answer cache shared through the TRACEFETCH_STATE Durable Object namespace, or
 * neither (this isolate's memory) without the binding; the adapters' code is a module of its own,
 * loaded only when the binding is there.
 */
async function sharedStateFor(bindings: Bindings, { state: variables, cache }: EnvSettings) {
  const binding = bindings.TRACEFETCH_STATE;
  if (binding === undefined) return {};
  const secret = requireStateSecret(variables, "the TRACEFETCH_STATE binding");
  const [durable, { GuardedState }] = await Promise.all([
    import("../state/durable-state.ts"),
    import("../state/guarded-state.ts"),
  ]);
  if (!durable.isStateNamespace(binding)) {
    throw new ConfigError(
      "TRACEFETCH_STATE must be a Durable Object namespace binding of the GatewayStateObject class (wrangler.toml, [[durable_objects.bindings]]), not a var or secret",
    );
  }
  const { timeoutMs } = variables;
  const now = () => performance.now();
  const state = new GuardedState(new durable.DurableStore(binding), {
    timeoutMs,
    secret,
    now,
    wall: Date.now,
  });
  return {
    state,
    // Public providers' answers in `cache:<provider>` objects, under the state's one guard; the
    // others in this isolate only.
    answerCache: new durable.DurableAnswerCache(binding, { ...cache, secret, calls: state }),
  };
}

function answer(
  gateway: Built,
  request: Request,
  bindings: Bindings,
  context: unknown,
): Response | Promise<Response> {
  if ("app" in gateway) {
    const answered = gateway.app.fetch(request, bindings, context as never);
    const flush = gateway.flush;
    if (flush === null) return answered;
    // Spans end as the answer is made; their export runs after it, inside waitUntil.
    return Promise.resolve(answered).then((response) => {
      (context as { waitUntil?: (p: Promise<unknown>) => void }).waitUntil?.(flush());
      return response;
    });
  }
  const requestId = crypto.randomUUID();
  return problemResponse(
    "unknown",
    "internal_error",
    requestId,
    `the gateway's configuration was refused: ${gateway.error}`,
  );
}

export default {
  fetch(request: Request, bindings: Bindings, context: unknown): Response | Promise<Response> {
    if (built) return answer(built, request, bindings, context);
    // Requests that arrive while the isolate configures itself all wait for the one configuration.
    building ??= gatewayFor(bindings).then((gateway) => (built = gateway));
    return building.then((gateway) => answer(gateway, request, bindings, context));
  },
};
