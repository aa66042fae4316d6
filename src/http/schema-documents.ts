/** The generated JSON Schemas, served raw at /schemas/<name>.json (generated at build time, never at run time). */
import envelope from "../../schemas/envelope.json" with { type: "json" };
import providerManifest from "../../schemas/provider-manifest.json" with { type: "json" };
import providerRequest from "../../schemas/provider-request.json" with { type: "json" };
import providerResponse from "../../schemas/provider-response.json" with { type: "json" };
import searchRequest from "../../schemas/search-request.json" with { type: "json" };

export const SCHEMA_DOCUMENTS: Record<string, unknown> = {
  envelope,
  "provider-manifest": providerManifest,
  "provider-request": providerRequest,
  "provider-response": providerResponse,
  "search-request": searchRequest,
};
