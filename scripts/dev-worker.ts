/**
 * `npm run dev:worker`: the worker under `wrangler dev`, offline and with no login, beside the
 * embedded default's example providers (served by Node on free loopback ports), so it answers as
 * `npm start` does. PORT (default 8787) and HOST as for `npm start`.
 */
import { spawn } from "node:child_process";
import { startEmbeddedDefault } from "../providers/corpus/embedded-default.ts";
import { listen } from "../src/runtime/node-listen.ts";

/** Keeps wrangler from reaching the network: no metrics, no account look-ups, no banner. */
export const WRANGLER_OFFLINE_ENV = {
  WRANGLER_SEND_METRICS: "false",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
  WRANGLER_HIDE_BANNER: "true",
};

const embedded = await startEmbeddedDefault(listen);
const wrangler = spawn(
  "npx",
  [
    "wrangler",
    "dev",
    "--env",
    "dev",
    "--ip",
    process.env.HOST || "127.0.0.1",
    "--port",
    process.env.PORT || "8787",
    "--var",
    `TRACEFETCH_MANIFEST:${JSON.stringify(embedded.manifest)}`,
  ],
  { stdio: "inherit", env: { ...process.env, ...WRANGLER_OFFLINE_ENV } },
);
const stop = () => wrangler.kill("SIGINT");
process.once("SIGINT", stop);
process.once("SIGTERM", stop);
wrangler.once("exit", (code) => {
  void embedded.close().then(() => process.exit(code ?? 0));
});
