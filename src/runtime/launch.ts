/**
 * What `npm start` (Node) and `deno task dev` (Deno) share: configuration from environment
 * variables, the workspace built-in over docs/, and the embedded default when no manifest is given.
 * Each runtime passes only its way of listening.
 */
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { startEmbeddedDefault } from "../../providers/corpus/embedded-default.ts";
import { corpusAdapter } from "../../providers/corpus/corpus-adapter.ts";
import { loadCorpus } from "../../providers/corpus/load-corpus.ts";
import { createGateway } from "../http/create-gateway.ts";
import { installedViewer } from "./api-docs-viewer.ts";
import { configFromEnv, type Env } from "../gateway/env-config.ts";
import { ConfigError } from "../gateway/gateway-config.ts";
import { remoteBuiltins } from "../gateway/remote-builtins.ts";
import {
  fileErrorCode,
  listenProblem,
  manifestFileMissing,
  manifestFileUnreadable,
} from "../gateway/start-problems.ts";
import { openTraceFile } from "./trace-file-sink.ts";

export type Served = { port: number; close: () => Promise<void> };
export type Listen = (
  fetch: (request: Request) => Response | Promise<Response>,
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
  env: Env,
  listen: Listen,
  /** The runtime's client for providers; the global fetch when absent. */
  fetchImpl?: typeof fetch,
  /** Where TRACEFETCH_MANIFEST's value came from, for messages (`tracefetch serve --manifest`). */
  manifestFrom = "TRACEFETCH_MANIFEST",
): Promise<Launched> {
  const settings = configFromEnv(env);
  const { host, manifest: configured } = settings;
  const docs = fileURLToPath(new URL("../../docs", import.meta.url));
  const workspace = corpusAdapter("workspace", "local", await loadCorpus(docs, "docs/"), {
    reload: () => loadCorpus(docs, "docs/"),
  });
  const { file, fileMaxBytes } = settings.mining;
  const traceSink = file === null ? undefined : await openTraceFile(file, fileMaxBytes);
  const embedded = configured === null ? await startEmbeddedDefault(listen) : null;
  try {
    const manifest = configured === null
      ? embedded?.manifest
      : configured.startsWith("{")
      ? configured
      : await readManifest(configured, manifestFrom);
    const warnings: string[] = [];
    const app = createGateway({
      manifest,
      env,
      // The embedded default's providers listen on loopback; your own manifest needs the variable.
      allowLoopback: embedded !== null || settings.allowLoopback,
      builtins: { workspace, ...await remoteBuiltins(env, settings.allowLoopback, fetchImpl) },
      fetch: fetchImpl,
      // On unless TRACEFETCH_API_DOCS says off: the viewer is read from node_modules on first use.
      apiDocs: (settings.apiDocs ?? true) ? installedViewer() : null,
      onWarning: (line) => warnings.push(line),
      traceSink,
    });
    let gateway: Served;
    try {
      gateway = await listen(app.fetch, host, settings.port, {
        headersTimeoutMs: settings.headersTimeoutMs,
        bodyTimeoutMs: settings.bodyTimeoutMs,
      });
    } catch (error) {
      const problem = listenProblem(error, host, settings.port);
      throw problem === null ? error : new ConfigError(problem);
    }
    return {
      url: `http://${host}:${gateway.port}`,
      manifestSource: embedded ? "embedded default manifest" : `manifest from ${manifestFrom}`,
      warnings,
      close: async () => {
        await gateway.close();
        await embedded?.close();
      },
    };
  } catch (error) {
    await embedded?.close();
    throw error;
  }
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
