/**
 * workerEntry(provider): the Cloudflare Workers entry (`export default`) of a provider configured
 * from bindings. Bindings are fixed for an isolate's life, so the app is built once; a
 * configuration the provider refuses answers every request with an adapter_unavailable
 * provider-error body that says what to fix.
 */
import { ProviderError, type SearchAdapter } from "../protocol/provider-contract.ts";
import { serveProvider } from "./serve-provider.ts";

type Bindings = Record<string, unknown>;
type App = ReturnType<typeof serveProvider>;

export type WorkerEntry = {
  fetch(request: Request, bindings: Bindings): Response | Promise<Response>;
};

export function workerEntry(provider: {
  /** The name and scope it answers as while its configuration is refused: its defaults. */
  name: string;
  scope: string;
  /** Builds the adapter from the text bindings; throws (a ConfigError) naming what to fix. */
  adapter: (text: (key: string) => string | undefined) => SearchAdapter;
}): WorkerEntry {
  let app: App | null = null;

  function build(bindings: Bindings): App {
    const text = (key: string) => typeof bindings[key] === "string" ? bindings[key] : undefined;
    try {
      return serveProvider(provider.adapter(text));
    } catch (error) {
      const message = `the provider's configuration was refused: ${(error as Error).message}`;
      console.error(`${provider.name} provider: ${message}`);
      return serveProvider({
        name: provider.name,
        scope: provider.scope,
        search: () => Promise.reject(new ProviderError("adapter_unavailable", message)),
      });
    }
  }

  return {
    fetch(request, bindings) {
      app ??= build(bindings);
      return app.fetch(request);
    },
  };
}
