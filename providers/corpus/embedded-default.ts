/**
 * The embedded default: two example corpus providers served over the HTTP protocol on free
 * loopback ports, and the manifest that lists them with the workspace built-in. `npm start` runs
 * it so a fresh clone answers real queries with no keys and no network.
 */
import { fileURLToPath } from "node:url";
import { type Listen, type Served, serveProvider } from "../../src/kit/mod.ts";
import { corpusAdapter } from "./corpus-adapter.ts";
import { loadCorpus } from "./load-corpus.ts";

export type ExampleProvider = { name: string; scope: string; source_class: string; folder: string };

/** Two corpora with some pages in common, so fusion shows pages found by both. */
export const EXAMPLE_PROVIDERS: readonly ExampleProvider[] = [
  { name: "engineering", scope: "notes", source_class: "note-candidate", folder: "engineering" },
  { name: "reference", scope: "specs", source_class: "reference-candidate", folder: "reference" },
];

export type Running = { manifest: unknown; close: () => Promise<void> };

export async function startEmbeddedDefault(listen: Listen, host = "127.0.0.1"): Promise<Running> {
  const servers: Served[] = [];
  const providers: unknown[] = [{
    name: "workspace",
    scope: "local",
    source_class: "project-doc",
    timeout_seconds: 5,
  }];
  for (const p of EXAMPLE_PROVIDERS) {
    const dir = fileURLToPath(new URL(`./data/${p.folder}`, import.meta.url));
    const reload = () => loadCorpus(dir);
    const app = serveProvider(corpusAdapter(p.name, p.scope, await reload(), { reload }));
    const running = await listen(app.fetch, host, 0);
    servers.push(running);
    const port = running.port;
    providers.push({
      name: p.name,
      scope: p.scope,
      source_class: p.source_class,
      endpoint: `http://${host}:${port}/search`,
      timeout_seconds: 5,
    });
  }
  return {
    manifest: {
      schema_version: "tracefetch.providers.v1",
      providers,
      tiers: { fast: { cost_ceiling_micros: 0 }, balanced: { cost_ceiling_micros: 20_000 } },
      default_tier: "balanced",
      // Public pages only: private ranges stay closed until an operator lists them.
      fetch: {},
    },
    close: () => Promise.all(servers.map((s) => s.close())).then(() => {}),
  };
}
