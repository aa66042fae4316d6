/** The generated JSON Schemas, served raw at /schemas/<name>.json (generated at build time, never at run time). */
import envelope from "../../schemas/envelope.json" with { type: "json" };
import providerManifest from "../../schemas/provider-manifest.json" with { type: "json" };
import providerRequest from "../../schemas/provider-request.json" with { type: "json" };
import providerResponse from "../../schemas/provider-response.json" with { type: "json" };
import providerDescribeRequest from "../../schemas/provider-describe-request.json" with {
  type: "json",
};
import providerDescribe from "../../schemas/provider-describe.json" with { type: "json" };
import providerHealthRequest from "../../schemas/provider-health-request.json" with {
  type: "json",
};
import providerHealth from "../../schemas/provider-health.json" with { type: "json" };
import providerExpandRequest from "../../schemas/provider-expand-request.json" with {
  type: "json",
};
import providerExpand from "../../schemas/provider-expand.json" with { type: "json" };
import providerRefreshRequest from "../../schemas/provider-refresh-request.json" with {
  type: "json",
};
import searchRequest from "../../schemas/search-request.json" with { type: "json" };

export const SCHEMA_DOCUMENTS: Record<string, unknown> = {
  envelope,
  "provider-manifest": providerManifest,
  "provider-request": providerRequest,
  "provider-response": providerResponse,
  "provider-describe-request": providerDescribeRequest,
  "provider-describe": providerDescribe,
  "provider-health-request": providerHealthRequest,
  "provider-health": providerHealth,
  "provider-expand-request": providerExpandRequest,
  "provider-expand": providerExpand,
  "provider-refresh-request": providerRefreshRequest,
  "search-request": searchRequest,
};
