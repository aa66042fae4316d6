/**
 * Serves a SearXNG instance's JSON API as a provider over the HTTP protocol (Node).
 * `npm run provider:searxng -- --base https://searx.example.org --port 9102`
 */
import { serveProvider } from "../../src/kit/mod.ts";
import { serveCli } from "../../src/kit/node/mod.ts";
import { searxngAdapter, searxngConfig } from "./searxng-adapter.ts";

const USAGE = `usage: npm run provider:searxng -- --base URL [--name NAME] [--scope SCOPE]
       [--categories LIST] [--engines LIST] [--language CODE] [--port N] [--host H]

Serves the SearXNG instance at URL (https, or http on a loopback host; its settings.yml must list
json under search.formats) at http://HOST:PORT/search.
Defaults: --name searxng, --scope web, --port 0 (a free port), --host 127.0.0.1.`;

const { served: { config }, base } = await serveCli({
  script: "provider:searxng",
  usage: USAGE,
  flags: ["base", "name", "scope", "categories", "engines", "language"],
  configure: (values) => {
    const config = searxngConfig(values);
    return { config, fetch: serveProvider(searxngAdapter(config)).fetch };
  },
});
console.log(
  `provider "${config.name}" (scope "${config.scope}", SearXNG at ${config.baseUrl.origin}) at ${base}/search`,
);
