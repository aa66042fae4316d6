/**
 * Cloudflare Workers entry: the SearXNG bridge with its configuration from bindings
 * (SEARXNG_BASE_URL; optional PROVIDER_NAME, PROVIDER_SCOPE, SEARXNG_CATEGORIES, SEARXNG_ENGINES,
 * SEARXNG_LANGUAGE). A bad configuration answers every request with an adapter_unavailable
 * provider-error body that says what to fix.
 */
import { workerEntry } from "../../src/kit/mod.ts";
import { searxngAdapter, searxngConfig } from "./searxng-adapter.ts";

export default workerEntry({
  name: "searxng",
  scope: "web",
  adapter: (text) =>
    searxngAdapter(searxngConfig({
      base: text("SEARXNG_BASE_URL"),
      name: text("PROVIDER_NAME"),
      scope: text("PROVIDER_SCOPE"),
      categories: text("SEARXNG_CATEGORIES"),
      engines: text("SEARXNG_ENGINES"),
      language: text("SEARXNG_LANGUAGE"),
    })),
});
