/**
 * Serves a SearXNG instance's JSON API as a provider over the HTTP protocol (Node).
 * `npm run provider:searxng -- --base https://searx.example.org --port 9102`
 */
import { parseArgs } from "node:util";
import { serveProvider } from "../../src/http/serve-provider.ts";
import { ConfigError } from "../../src/protocol/config-error.ts";
import { listen } from "../../src/runtime/node-listen.ts";
import { searxngAdapter, type SearxngConfig, searxngConfig } from "./searxng-adapter.ts";

const USAGE = `usage: npm run provider:searxng -- --base URL [--name NAME] [--scope SCOPE]
       [--categories LIST] [--engines LIST] [--language CODE] [--port N] [--host H]

Serves the SearXNG instance at URL (https, or http on a loopback host; its settings.yml must list
json under search.formats) at http://HOST:PORT/search.
Defaults: --name searxng, --scope web, --port 0 (a free port), --host 127.0.0.1.`;

const { values } = parseArgs({
  options: {
    base: { type: "string" },
    name: { type: "string" },
    scope: { type: "string" },
    categories: { type: "string" },
    engines: { type: "string" },
    language: { type: "string" },
    port: { type: "string", default: "0" },
    host: { type: "string", default: "127.0.0.1" },
    help: { type: "boolean", default: false },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
let config: SearxngConfig;
try {
  if (!/^\d+$/.test(values.port)) throw new ConfigError("port must be a number");
  config = searxngConfig(values);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(`provider:searxng: ${error.message}\n\n${USAGE}`);
  process.exit(2);
}
const app = serveProvider(searxngAdapter(config));
const { port } = await listen(app.fetch, values.host, Number(values.port));
console.log(
  `provider "${config.name}" (scope "${config.scope}", SearXNG at ${config.baseUrl.origin}) at http://${values.host}:${port}/search`,
);
