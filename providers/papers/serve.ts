/**
 * Serves scholarly search through OpenAlex as a provider over the HTTP protocol (Node).
 * `npm run provider:papers -- --mailto you@example.org --port 9103`
 */
import { parseArgs } from "node:util";
import { serveProvider } from "../../src/http/serve-provider.ts";
import { ConfigError } from "../../src/protocol/config-error.ts";
import { listen } from "../../src/runtime/node-listen.ts";
import { openAlexAdapter, type OpenAlexConfig, openAlexConfig } from "./openalex-adapter.ts";

const USAGE = `usage: npm run provider:papers -- [--base URL] [--name NAME] [--scope SCOPE]
       [--mailto EMAIL] [--port N] [--host H]

Serves OpenAlex's works search at http://HOST:PORT/search. An API key, when you have one, is read
from the OPENALEX_API_KEY environment variable (never from a flag: flags show in process lists).
Defaults: --base https://api.openalex.org, --name papers, --scope papers, --port 0 (a free port),
--host 127.0.0.1.`;

const { values } = parseArgs({
  options: {
    base: { type: "string" },
    name: { type: "string" },
    scope: { type: "string" },
    mailto: { type: "string" },
    port: { type: "string", default: "0" },
    host: { type: "string", default: "127.0.0.1" },
    help: { type: "boolean", default: false },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
let config: OpenAlexConfig;
try {
  if (!/^\d+$/.test(values.port)) throw new ConfigError("port must be a number");
  config = openAlexConfig({ ...values, apiKey: process.env.OPENALEX_API_KEY });
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(`provider:papers: ${error.message}\n\n${USAGE}`);
  process.exit(2);
}
const app = serveProvider(openAlexAdapter(config));
const { port } = await listen(app.fetch, values.host, Number(values.port));
console.log(
  `provider "${config.name}" (scope "${config.scope}", OpenAlex at ${config.baseUrl.origin}${
    config.apiKey ? ", with an API key" : ""
  }) at http://${values.host}:${port}/search`,
);
