/**
 * Serves scholarly search through OpenAlex as a provider over the HTTP protocol (Node).
 * `npm run provider:papers -- --mailto you@example.org --port 9103`
 */
import { serveProvider } from "../../src/kit/mod.ts";
import { serveCli } from "../../src/kit/node/mod.ts";
import { openAlexAdapter, openAlexConfig } from "./openalex-adapter.ts";

const USAGE = `usage: npm run provider:papers -- [--base URL] [--name NAME] [--scope SCOPE]
       [--mailto EMAIL] [--port N] [--host H]

Serves OpenAlex's works search at http://HOST:PORT/search. An API key, when you have one, is read
from the OPENALEX_API_KEY environment variable (never from a flag: flags show in process lists).
Defaults: --base https://api.openalex.org, --name papers, --scope papers, --port 0 (a free port),
--host 127.0.0.1.`;

const { served: { config }, base } = await serveCli({
  script: "provider:papers",
  usage: USAGE,
  flags: ["base", "name", "scope", "mailto"],
  configure: (values) => {
    const config = openAlexConfig({ ...values, apiKey: process.env.OPENALEX_API_KEY });
    return { config, fetch: serveProvider(openAlexAdapter(config)).fetch };
  },
});
console.log(
  `provider "${config.name}" (scope "${config.scope}", OpenAlex at ${config.baseUrl.origin}${
    config.apiKey ? ", with an API key" : ""
  }) at ${base}/search`,
);
