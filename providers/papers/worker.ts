/**
 * Cloudflare Workers entry: the OpenAlex papers provider with its configuration from bindings
 * (all optional: OPENALEX_BASE_URL, OPENALEX_MAILTO, the secret OPENALEX_API_KEY, PROVIDER_NAME,
 * PROVIDER_SCOPE). A bad configuration answers every request with an adapter_unavailable
 * provider-error body that says what to fix.
 */
import { workerEntry } from "../../src/kit/mod.ts";
import { openAlexAdapter, openAlexConfig } from "./openalex-adapter.ts";

export default workerEntry({
  name: "papers",
  scope: "papers",
  adapter: (text) =>
    openAlexAdapter(openAlexConfig({
      base: text("OPENALEX_BASE_URL"),
      name: text("PROVIDER_NAME"),
      scope: text("PROVIDER_SCOPE"),
      mailto: text("OPENALEX_MAILTO"),
      apiKey: text("OPENALEX_API_KEY"),
    })),
});
