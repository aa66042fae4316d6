/**
 * Serves a folder of Markdown, JSON or JSONL documents as a provider over the HTTP protocol.
 * `npm run provider:corpus -- --dir ./my-docs --name mydocs --scope docs --port 9101`
 * (`--stemming off` for a corpus of code or of a language other than English).
 */
import { checkName, ConfigError, serveProvider } from "../../src/kit/mod.ts";
import { serveCli } from "../../src/kit/node/mod.ts";
import { corpusAdapter } from "./corpus-adapter.ts";
import { loadCorpus } from "./load-corpus.ts";

const USAGE =
  `usage: npm run provider:corpus -- --dir DIR --name NAME --scope SCOPE [--stemming on|off]
       [--port N] [--host H]

Serves the documents under DIR (Markdown with optional front matter title/locator/published_at,
JSON, or JSONL of {title, locator, text, published_at?}) at http://HOST:PORT/search.
--stemming off finds words only as written: for code-heavy corpora, or corpora in a language other
than English, whose words English stemming would merge wrongly.
Defaults: --stemming on, --port 0 (a free port), --host 127.0.0.1.`;

const { served: { name, scope, documents }, base } = await serveCli({
  script: "provider:corpus",
  usage: USAGE,
  flags: ["dir", "name", "scope", "stemming"],
  configure: async (values) => {
    const dir = values.dir;
    if (!dir) throw new ConfigError("--dir is required");
    const name = checkName("--name", values.name);
    const scope = checkName("--scope", values.scope);
    const stemming = values.stemming ?? "on";
    if (stemming !== "on" && stemming !== "off") {
      throw new ConfigError(`--stemming must be on or off, not "${stemming.slice(0, 20)}"`);
    }
    const documents = await loadCorpus(dir);
    const options = { reload: () => loadCorpus(dir), stemming: stemming === "on" };
    return {
      name,
      scope,
      documents,
      fetch: serveProvider(corpusAdapter(name, scope, documents, options)).fetch,
    };
  },
});
console.log(
  `provider "${name}" (scope "${scope}", ${documents.length} documents) at ${base}/search`,
);
