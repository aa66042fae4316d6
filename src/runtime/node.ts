/**
 * Node entry (`npm start`): reads configuration from the environment, builds the gateway and
 * serves it. Without TRACEFETCH_MANIFEST it starts the embedded default's example providers.
 */
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { startEmbeddedDefault } from "../../providers/corpus/embedded-default.ts";
import { listen } from "./node-listen.ts";
import { loadCorpus } from "../../providers/corpus/load-corpus.ts";
import { ConfigError, intSetting } from "../http/gateway-config.ts";
import { createGateway } from "../http/create-gateway.ts";
import { corpusAdapter } from "../transport/corpus-adapter.ts";

const env = process.env;
try {
  const host = env.HOST || "127.0.0.1";
  const port = intSetting(env, "PORT") ?? 8787;
  const docs = fileURLToPath(new URL("../../docs", import.meta.url));
  const workspace = corpusAdapter("workspace", "local", await loadCorpus(docs, "docs/"));
  const configured = env.TRACEFETCH_MANIFEST?.trim();
  const embedded = configured ? null : await startEmbeddedDefault();
  const manifest = configured
    ? configured.startsWith("{") ? configured : await readFile(configured, "utf8")
    : embedded?.manifest;
  const maxProviders = intSetting(env, "TRACEFETCH_MAX_PROVIDERS");
  const maxInflight = intSetting(env, "TRACEFETCH_MAX_INFLIGHT");
  const app = createGateway({
    manifest,
    allowLoopback: embedded !== null || env.TRACEFETCH_ALLOW_LOOPBACK === "1",
    builtins: { workspace },
    env,
    ...(maxProviders === undefined ? {} : { maxProviders }),
    ...(maxInflight === undefined ? {} : { maxInflight }),
  });
  const gateway = await listen(app.fetch, host, port);
  console.log(
    `TraceFetch Edge listening on http://${host}:${port} (${
      embedded ? "embedded default manifest" : "manifest from TRACEFETCH_MANIFEST"
    })`,
  );
  const stop = () => {
    void gateway.close();
    void embedded?.close();
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
} catch (error) {
  if (
    error instanceof ConfigError || (error as NodeJS.ErrnoException).code === "ENOENT" ||
    (error as NodeJS.ErrnoException).code === "EADDRINUSE"
  ) {
    console.error(`tracefetch: ${(error as Error).message}`);
    process.exit(2);
  }
  throw error;
}
