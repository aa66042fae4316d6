/**
 * What `npm start` (Node) and `deno task dev` (Deno) share, once the root has parsed its
 * environment (readSettings): the manifest it names loaded (inline JSON, a file, or the embedded
 * default when none is given), the workspace built-in over docs/, and the gateway served. Each
 * runtime passes only its way of listening and its ports.
 */
import { createHmac } from "node:crypto";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { startEmbeddedDefault } from "../../providers/corpus/embedded-default.ts";
import { corpusAdapter } from "../../providers/corpus/corpus-adapter.ts";
import { loadCorpus } from "../../providers/corpus/load-corpus.ts";
import { createGateway } from "../http/create-gateway.ts";
import { nodeFetchParts } from "./node-evidence.ts";
import { installedViewer } from "./api-docs-viewer.ts";
import { ConfigError } from "../protocol/config-error.ts";
import type { PeerAddress, Ports } from "../config/gateway-config.ts";
import type { ReadSettings } from "../config/settings.ts";
import { remoteBuiltins } from "../builtins/remote-builtins.ts";
import {
  fileErrorCode,
  listenProblem,
  manifestFileMissing,
  manifestFileUnreadable,
} from "../config/start-problems.ts";
import { openTraceFile } from "./trace-file-sink.ts";
import { requireStateSecret, type StateVariables } from "../config/state-settings.ts";
import type { CacheVariables } from "../config/cache-settings.ts";
import { GuardedState } from "../state/guarded-state.ts";
import { StoreGuard } from "../state/store-guard.ts";
import { MemoryState } from "../state/memory-state.ts";
import type { StoreCalls } from "../state/answer-cache.ts";
import type { HmacPort } from "../io/digests.ts";
import { parseRedisUrl, type RedisTarget } from "../state/redis-url.ts";
import { telemetryFor } from "../observe/telemetry-for.ts";

export type Served = { port: number; close: () => Promise<void> };

/**
 * What a listener hands the app beside each request (Hono's `c.env`): the shape Deno.serve gives
 * its handler, which Node's listener (node-listen.ts) gives too, so one port reads the peer's
 * address on both.
 */
export type ServeInfo = { remoteAddr: { hostname?: string | undefined } };

/** The peer port (Ports, `peerAddress`) of a gateway served by a Listen: the socket's address. */
export const servedPeerAddress: PeerAddress = (_request, server) =>
  (server as Partial<ServeInfo> | undefined)?.remoteAddr?.hostname ?? null;

export type Listen = (
  fetch: (request: Request, info?: ServeInfo) => Response | Promise<Response>,
  hostname: string,
  port: number,
  deadlines?: { headersTimeoutMs?: number; bodyTimeoutMs?: number },
) => Promise<Served>;

export type Launched = {
  url: string;
  manifestSource: string;
  /** What the configuration will not do as expected, one line each, for the runtime to print. */
  warnings: string[];
  close: () => Promise<void>;
};

export async function launch(
  read: ReadSettings,
  listen: Listen,
  /** The runtime's clients for providers and third parties; the global fetch when absent. */
  ports: Pick<Ports, "fetch" | "exchange"> = {},
  /** Where TRACEFETCH_MANIFEST's value came from, for messages (`tracefetch serve --manifest`). */
  manifestFrom = "TRACEFETCH_MANIFEST",
): Promise<Launched> {
  const { host, port, manifest: configured } = read.env;
  const docs = fileURLToPath(new URL("../../docs", import.meta.url));
  const workspace = corpusAdapter("workspace", "local", await loadCorpus(docs, "docs/"), {
    reload: () => loadCorpus(docs, "docs/"),
  });
  const { file, fileMaxBytes } = read.env.mining;
  const traceSink = file === null ? undefined : await openTraceFile(file, fileMaxBytes);
  const embedded = configured === null ? await startEmbeddedDefault(listen) : null;
  try {
    // The embedded default's providers listen on loopback; your own manifest needs the variable.
    const settings = read.withManifest(
      embedded !== null ? { value: embedded.manifest, loopback: true } : {
        text: configured?.startsWith("{")
          ? configured
          : await readManifest(configured as string, manifestFrom),
      },
    );
    const warnings: string[] = [];
    const shared = await sharedState(settings.state);
    // Without a shared state, a cache in Redis still has the one guard, reported as `shared_state`.
    const guard = shared ?? cacheGuard(settings.state, settings.cache);
    const state = guard instanceof StoreGuard
      ? new MemoryState({ now: () => performance.now(), wall: () => Date.now() }, guard)
      : guard;
    const answerCache = guard === undefined
      ? undefined
      : await redisCache(settings.state, settings.cache, guard).catch(async (e) => {
        await shared?.close();
        throw e;
      });
    const telemetry = telemetryFor(settings.telemetry, settings.mining?.rawQueries ?? false);
    const app = createGateway(settings, {
      state,
      answerCache,
      ...ports,
      builtins: { workspace, ...await remoteBuiltins(settings.builtins, ports.fetch) },
      // On unless TRACEFETCH_API_DOCS says off: the viewer is read from node_modules on first use.
      apiDocs: (settings.apiDocs ?? true) ? installedViewer() : null,
      onWarning: (line) => warnings.push(line),
      traceSink,
      peerAddress: servedPeerAddress,
      // Pages are reached through node:dns and undici on Node, and on Deno through its Node layer.
      evidence: nodeFetchParts(),
      // Node and Deno are scraped at `GET /metrics`; traces go out when an OTLP endpoint is set.
      telemetry,
    });
    let gateway: Served;
    try {
      gateway = await listen(app.fetch, host, port, {
        headersTimeoutMs: settings.headersTimeoutMs,
        bodyTimeoutMs: settings.bodyTimeoutMs,
      });
    } catch (error) {
      const problem = listenProblem(error, host, port);
      throw problem === null ? error : new ConfigError(problem);
    }
    return {
      url: `http://${host}:${gateway.port}`,
      manifestSource: embedded ? "embedded default manifest" : `manifest from ${manifestFrom}`,
      warnings,
      close: async () => {
        await gateway.close();
        // The spans of the last requests go out before the process ends (bounded by the export
        // timeout; a collector that is down costs no more).
        await telemetry.tracing?.flush();
        await shared?.close();
        await answerCache?.close();
        await embedded?.close();
      },
    };
  } catch (error) {
    await embedded?.close();
    throw error;
  }
}

/**
 * The store TRACEFETCH_STATE_URL names, behind its timeout and fallback; undefined without it, when
 * each instance keeps its own state in memory.
 */
async function sharedState(variables: StateVariables): Promise<GuardedState | undefined> {
  if (variables.url === null) return undefined;
  // Loaded only when asked for: a gateway without Redis never loads its client.
  const { RedisStore } = await import("../state/redis-state.ts");
  const store = new RedisStore(redisTarget(variables.url), variables.prefix);
  await refuseStart(store);
  return new GuardedState(store, {
    timeoutMs: variables.timeoutMs,
    secret: requireStateSecret(variables, "TRACEFETCH_STATE_URL"),
    mac: nodeHmac,
    now: () => performance.now(),
    wall: () => Date.now(),
  });
}

/** The runtime's HMAC-SHA-256 for io/digests.ts: node:crypto answers at once, off the thread pool. */
const nodeHmac: HmacPort = (key, message) => createHmac("sha256", key).update(message).digest();

/** The guard of a cache in a Redis of its own with no shared state; undefined without one. */
function cacheGuard(state: StateVariables, cache: CacheVariables): StoreGuard | undefined {
  if (cache.url === null) return undefined;
  return new StoreGuard({ timeoutMs: state.timeoutMs, now: () => performance.now() });
}

/**
 * The Redis that keeps public providers' answers: TRACEFETCH_CACHE_URL, else the state's; its calls
 * under the instance's one guard.
 */
async function redisCache(state: StateVariables, cache: CacheVariables, guard: StoreCalls) {
  const url = cache.url ?? state.url;
  if (url === null) return undefined;
  const { RedisAnswerCache } = await import("../state/redis-cache.ts");
  const secret = requireStateSecret(
    state,
    cache.url === null ? "TRACEFETCH_STATE_URL" : "TRACEFETCH_CACHE_URL",
  );
  const cached = new RedisAnswerCache({
    target: redisTarget(url),
    setting: cache.url === null ? "TRACEFETCH_STATE_URL" : "TRACEFETCH_CACHE_URL",
    prefix: state.prefix,
    secret,
    mac: nodeHmac,
    // One guard for the state and the cache: one timeout, back-off and `shared_state` entry.
    calls: guard,
  });
  await refuseStart(cached);
  return cached;
}

/** A URL the settings checked, parsed. */
function redisTarget(url: string): RedisTarget {
  const target = parseRedisUrl(url);
  if (target === null) throw new ConfigError("a Redis URL the settings accepted cannot be read");
  return target;
}

/** Stops the start, in one line, over a Redis the gateway must not use (a database it lacks). */
async function refuseStart(
  store: { startProblem(): Promise<string | null>; close(): Promise<void> },
): Promise<void> {
  const problem = await store.startProblem();
  if (problem === null) return;
  await store.close();
  throw new ConfigError(problem);
}

/** The manifest file TRACEFETCH_MANIFEST names; a path that cannot be read stops the start in one line. */
export async function readManifest(path: string, from: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    const code = fileErrorCode(error);
    if (code === "ENOENT") throw new ConfigError(manifestFileMissing(path, from));
    if (code !== null) throw new ConfigError(manifestFileUnreadable(path, from, code));
    throw error;
  }
}
