/**
 * The generated JSON Schemas, served raw at /schemas/<name>.json and printed by `tracefetch schema`
 * (generated at build time, never at run time). The gateway imports this module only when a schema
 * is asked for, so the Worker ships it as a module of its own and its main module stays small.
 */
import type { SchemaName } from "./schema-names.ts";
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
import providerStatsRequest from "../../schemas/provider-stats-request.json" with {
  type: "json",
};
import providerStats from "../../schemas/provider-stats.json" with { type: "json" };
import searchRequest from "../../schemas/search-request.json" with { type: "json" };
import fetchRequest from "../../schemas/fetch-request.json" with { type: "json" };
import verifyRequest from "../../schemas/verify-request.json" with { type: "json" };
import evidence from "../../schemas/evidence.json" with { type: "json" };
import trace from "../../schemas/trace.json" with { type: "json" };
import traceBatch from "../../schemas/trace-batch.json" with { type: "json" };

/** Exactly the names SCHEMA_NAMES lists: one missing or one extra does not compile. */
const documents = {
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
  "provider-stats-request": providerStatsRequest,
  "provider-stats": providerStats,
  "search-request": searchRequest,
  "fetch-request": fetchRequest,
  "verify-request": verifyRequest,
  evidence,
  trace,
  "trace-batch": traceBatch,
} satisfies Record<SchemaName, unknown>;

export const SCHEMA_DOCUMENTS: Readonly<Record<string, unknown>> = documents;
