/**
 * Cloudflare Workers entry: the SearXNG bridge with its configuration from bindings
 * (SEARXNG_BASE_URL; optional PROVIDER_NAME, PROVIDER_SCOPE, SEARXNG_CATEGORIES, SEARXNG_ENGINES,
 * SEARXNG_LANGUAGE). A bad configuration answers every request with an adapter_unavailable
 * provider-error body that says what to fix.
 */
import { serveProvider } from "../../src/http/serve-provider.ts";
import { ProviderError } from "../../src/transport/provider-client.ts";
import { searxngAdapter, searxngConfig } from "./searxng-adapter.ts";

type Bindings = Record<string, unknown>;
type App = ReturnType<typeof serveProvider>;

// Bindings are fixed for an isolate's life, so the app is built once.
let app: App | null = null;

function build(bindings: Bindings): App {
  const text = (key: string) => typeof bindings[key] === "string" ? bindings[key] : undefined;
  try {
    const config = searxngConfig({
      base: text("SEARXNG_BASE_URL"),
      name: text("PROVIDER_NAME"),
      scope: text("PROVIDER_SCOPE"),
      categories: text("SEARXNG_CATEGORIES"),
      engines: text("SEARXNG_ENGINES"),
      language: text("SEARXNG_LANGUAGE"),
    });
    return serveProvider(searxngAdapter(config));
  } catch (error) {
    const message = `the provider's configuration was refused: ${(error as Error).message}`;
    console.error(`searxng provider: ${message}`);
    return serveProvider({
      name: "searxng",
      scope: "web",
      search: () => Promise.reject(new ProviderError("adapter_unavailable", message)),
    });
  }
}

export default {
  fetch(request: Request, bindings: Bindings): Response | Promise<Response> {
    app ??= build(bindings);
    return app.fetch(request);
  },
};
