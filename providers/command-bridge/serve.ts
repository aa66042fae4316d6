/**
 * Serves the command providers of a TraceFetch 1.0 manifest over the HTTP provider protocol, one
 * endpoint per provider (Node and Deno: it runs child processes).
 * `npm run provider:command-bridge -- --manifest path/to/tracefetch-1.0.json --port 9104`
 */
import { parseArgs } from "node:util";
import { ConfigError } from "../../src/protocol/config-error.ts";
import { listen } from "../../src/runtime/node-listen.ts";
import { commandBridge } from "./bridge.ts";
import { type CommandManifest, readCommandManifest } from "./command-manifest.ts";

const USAGE = `usage: npm run provider:command-bridge -- --manifest FILE [--port N] [--host H]

Runs each command provider of the TraceFetch 1.0 manifest FILE (its "command" argv; a path with a
"/" is relative to FILE's folder, a bare name is looked up on PATH) behind its own endpoint,
http://HOST:PORT/<name>. Defaults: --port 0 (a free port), --host 127.0.0.1.`;

const { values } = parseArgs({
  options: {
    manifest: { type: "string" },
    port: { type: "string", default: "0" },
    host: { type: "string", default: "127.0.0.1" },
    help: { type: "boolean", default: false },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
let manifest: CommandManifest;
try {
  if (!values.manifest) throw new ConfigError("--manifest is required");
  if (!/^\d+$/.test(values.port)) throw new ConfigError("--port must be a number");
  manifest = await readCommandManifest(values.manifest);
  if (manifest.providers.length === 0) {
    throw new ConfigError("the manifest has no command provider");
  }
} catch (error) {
  const code = (error as { code?: unknown }).code;
  if (!(error instanceof ConfigError) && code !== "ENOENT" && code !== "EACCES") throw error;
  console.error(`provider:command-bridge: ${(error as Error).message}\n\n${USAGE}`);
  process.exit(2);
}
const bridge = commandBridge(manifest.providers);
const server = await listen(bridge.fetch, values.host, Number(values.port));
const base = `http://${values.host}:${server.port}`;
for (const p of manifest.providers) {
  console.log(`provider "${p.name}" (scope "${p.scope}") at ${base}/${p.name}`);
}
for (const s of manifest.skipped) console.log(`provider "${s.name}" not served: ${s.reason}`);
// Children are ended before we exit: a stubborn one must get its SIGKILL, not outlive us.
const stop = () => void Promise.all([bridge.stop(), server.close()]).then(() => process.exit(0));
process.once("SIGINT", stop);
process.once("SIGTERM", stop);
