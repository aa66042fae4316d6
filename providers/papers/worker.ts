/**
 * Cloudflare Workers entry: the OpenAlex papers provider with its configuration from bindings
 * (all optional: OPENALEX_BASE_URL, OPENALEX_MAILTO, the secret OPENALEX_API_KEY, PROVIDER_NAME,
 * PROVIDER_SCOPE). A bad configuration answers every request with an adapter_unavailable
 * provider-error body that says what to fix.
 */
import { serveProvider } from "../../src/http/serve-provider.ts";
import { ProviderError } from "../../src/transport/provider-client.ts";
import { openAlexAdapter, openAlexConfig } from "./openalex-adapter.ts";

type Bindings = Record<string, unknown>;
type App = ReturnType<typeof serveProvider>;

// Bindings are fixed for an isolate's life, so the app is built once.
let app: App | null = null;

function build(bindings: Bindings): App {
  const text = (key: string) => typeof bindings[key] === "string" ? bindings[key] : undefined;
  try {
    const config = openAlexConfig({
      base: text("OPENALEX_BASE_URL"),
      name: text("PROVIDER_NAME"),
      scope: text("PROVIDER_SCOPE"),
      mailto: text("OPENALEX_MAILTO"),
      apiKey: text("OPENALEX_API_KEY"),
    });
    return serveProvider(openAlexAdapter(config));
  } catch (error) {
    const message = `the provider's configuration was refused: ${(error as Error).message}`;
    console.error(`papers provider: ${message}`);
    return serveProvider({
      name: "papers",
      scope: "papers",
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
