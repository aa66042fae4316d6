/**
 * Serves the command providers of a TraceFetch 1.0 manifest over the HTTP provider protocol, one
 * endpoint per provider (Node and Deno: it runs child processes).
 * `npm run provider:command-bridge -- --manifest path/to/tracefetch-1.0.json --port 9104`
 */
import { ConfigError } from "../../src/kit/mod.ts";
import { serveCli } from "../../src/kit/node/mod.ts";
import { commandBridge } from "./bridge.ts";
import { type CommandManifest, readCommandManifest } from "./command-manifest.ts";

const USAGE = `usage: npm run provider:command-bridge -- --manifest FILE [--port N] [--host H]

Runs each command provider of the TraceFetch 1.0 manifest FILE (its "command" argv; a path with a
"/" is relative to FILE's folder, a bare name is looked up on PATH) behind its own endpoint,
http://HOST:PORT/<name>. Defaults: --port 0 (a free port), --host 127.0.0.1.`;

const { served: { manifest, bridge }, listening, base } = await serveCli({
  script: "provider:command-bridge",
  usage: USAGE,
  flags: ["manifest"],
  configure: async (values) => {
    if (!values.manifest) throw new ConfigError("--manifest is required");
    const manifest = await readManifest(values.manifest);
    if (manifest.providers.length === 0) {
      throw new ConfigError("the manifest has no command provider");
    }
    const bridge = commandBridge(manifest.providers);
    return { manifest, bridge, fetch: bridge.fetch };
  },
});
for (const p of manifest.providers) {
  console.log(`provider "${p.name}" (scope "${p.scope}") at ${base}/${p.name}`);
}
for (const s of manifest.skipped) console.log(`provider "${s.name}" not served: ${s.reason}`);
// Children are ended before we exit: a stubborn one must get its SIGKILL, not outlive us.
const stop = () => void Promise.all([bridge.stop(), listening.close()]).then(() => process.exit(0));
process.once("SIGINT", stop);
process.once("SIGTERM", stop);

/** A manifest file that is missing or unreadable is the operator's to fix, like a bad flag. */
async function readManifest(path: string): Promise<CommandManifest> {
  try {
    return await readCommandManifest(path);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "ENOENT" || code === "EACCES") throw new ConfigError((error as Error).message);
    throw error;
  }
}
