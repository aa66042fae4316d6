/**
 * Serves a folder of Markdown, JSON or JSONL documents as a provider over the HTTP protocol.
 * `npm run provider:corpus -- --dir ./my-docs --name mydocs --scope docs --port 9101`
 */
import { parseArgs } from "node:util";
import { serveProvider } from "../../src/http/serve-provider.ts";
import { corpusAdapter } from "../../src/transport/corpus-adapter.ts";
import { NAME_PATTERN } from "../../src/protocol/manifest-schema.ts";
import { listen } from "../../src/runtime/node-listen.ts";
import { loadCorpus } from "./load-corpus.ts";

const USAGE =
  `usage: npm run provider:corpus -- --dir DIR --name NAME --scope SCOPE [--port N] [--host H]

Serves the documents under DIR (Markdown with optional front matter title/locator/published_at,
JSON, or JSONL of {title, locator, text, published_at?}) at http://HOST:PORT/search.
Defaults: --port 0 (a free port), --host 127.0.0.1.`;

const { values } = parseArgs({
  options: {
    dir: { type: "string" },
    name: { type: "string" },
    scope: { type: "string" },
    port: { type: "string", default: "0" },
    host: { type: "string", default: "127.0.0.1" },
    help: { type: "boolean", default: false },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const { dir, name, scope } = values;
if (
  !dir || !name || !scope || !NAME_PATTERN.test(name) || !NAME_PATTERN.test(scope) ||
  !/^\d+$/.test(values.port)
) {
  console.error(USAGE);
  process.exit(2);
}
const documents = await loadCorpus(dir);
const app = serveProvider(corpusAdapter(name, scope, documents));
const { port } = await listen(app.fetch, values.host, Number(values.port));
console.log(
  `provider "${name}" (scope "${scope}", ${documents.length} documents) at http://${values.host}:${port}/search`,
);
