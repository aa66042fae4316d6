/**
 * What `npm start` (Node) and `deno task dev` (Deno) share: configuration from environment
 * variables, the workspace built-in over docs/, and the embedded default when no manifest is given.
 * Each runtime passes only its way of listening.
 */
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { startEmbeddedDefault } from "../../providers/corpus/embedded-default.ts";
import { loadCorpus } from "../../providers/corpus/load-corpus.ts";
import { createGateway } from "../http/create-gateway.ts";
import { intSetting } from "../http/gateway-config.ts";
import { builtinsFromEnv } from "../transport/builtins/mod.ts";
import { corpusAdapter } from "../transport/corpus-adapter.ts";

export type Served = { port: number; close: () => Promise<void> };
export type Listen = (
  fetch: (request: Request) => Response | Promise<Response>,
  hostname: string,
  port: number,
  deadlines?: { headersTimeoutMs?: number; bodyTimeoutMs?: number },
) => Promise<Served>;

export type Launched = { url: string; manifestSource: string; close: () => Promise<void> };

export async function launch(
  env: Record<string, string | undefined>,
  listen: Listen,
  /** The runtime's client for providers; the global fetch when absent. */
  fetchImpl?: typeof fetch,
): Promise<Launched> {
  const host = env.HOST || "127.0.0.1";
  const port = intSetting(env, "PORT") ?? 8787;
  const docs = fileURLToPath(new URL("../../docs", import.meta.url));
  const workspace = corpusAdapter("workspace", "local", await loadCorpus(docs, "docs/"));
  const configured = env.TRACEFETCH_MANIFEST?.trim();
  const embedded = configured ? null : await startEmbeddedDefault(listen);
  try {
    const manifest = configured
      ? configured.startsWith("{") ? configured : await readFile(configured, "utf8")
      : embedded?.manifest;
    const maxProviders = intSetting(env, "TRACEFETCH_MAX_PROVIDERS");
    const maxInflight = intSetting(env, "TRACEFETCH_MAX_INFLIGHT");
    const headersTimeoutMs = intSetting(env, "TRACEFETCH_HEADERS_TIMEOUT_MS");
    const bodyTimeoutMs = intSetting(env, "TRACEFETCH_BODY_TIMEOUT_MS");
    const app = createGateway({
      manifest,
      allowLoopback: embedded !== null || env.TRACEFETCH_ALLOW_LOOPBACK === "1",
      builtins: { workspace, ...builtinsFromEnv(env, fetchImpl) },
      env,
      ...(fetchImpl === undefined ? {} : { fetch: fetchImpl }),
      ...(maxProviders === undefined ? {} : { maxProviders }),
      ...(maxInflight === undefined ? {} : { maxInflight }),
      ...(bodyTimeoutMs === undefined ? {} : { bodyTimeoutMs }),
    });
    const gateway = await listen(app.fetch, host, port, {
      ...(headersTimeoutMs === undefined ? {} : { headersTimeoutMs }),
      ...(bodyTimeoutMs === undefined ? {} : { bodyTimeoutMs }),
    });
    return {
      url: `http://${host}:${gateway.port}`,
      manifestSource: embedded ? "embedded default manifest" : "manifest from TRACEFETCH_MANIFEST",
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
