/**
 * Writes schemas/*.json (JSON Schema draft 2020-12) from the valibot schemas, or with --check
 * fails when the committed files differ from what would be written.
 */
import { readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { toJsonSchema } from "@valibot/to-json-schema";
import type { GenericSchema } from "valibot";
import {
  DescribeRequestSchema,
  DescribeResponseSchema,
  EnvelopeSchema,
  ExpandRequestSchema,
  ExpandResponseSchema,
  FetchedEvidenceSchema,
  FetchRequestSchema,
  HealthRequestSchema,
  HealthResponseSchema,
  ManifestSchema,
  PROVIDER_DESCRIBE_REQUEST_VERSION,
  PROVIDER_DESCRIBE_VERSION,
  PROVIDER_EXPAND_REQUEST_VERSION,
  PROVIDER_EXPAND_VERSION,
  PROVIDER_HEALTH_REQUEST_VERSION,
  PROVIDER_HEALTH_VERSION,
  PROVIDER_REFRESH_REQUEST_VERSION,
  PROVIDER_STATS_REQUEST_VERSION,
  PROVIDER_STATS_VERSION,
  ProviderRequestSchema,
  ProviderResponseSchema,
  RefreshRequestSchema,
  SearchRequestSchema,
  StatsRequestSchema,
  StatsResponseSchema,
  TRACE_BATCH_VERSION,
  TRACE_VERSION,
  TraceBatchSchema,
  TraceSchema,
  VerifyRequestSchema,
} from "../src/protocol/mod.ts";
import { genMcpTools } from "./gen-mcp-tools.ts";
import { JSON_SCHEMA_CONVERSION } from "./json-schema-conversion.ts";
import { genOpenApi } from "./gen-openapi.ts";

const SCHEMAS: Record<string, { schema: GenericSchema; title: string }> = {
  "provider-manifest": { schema: ManifestSchema, title: "tracefetch.providers.v1" },
  "provider-request": { schema: ProviderRequestSchema, title: "tracefetch.provider-request.v1" },
  "provider-response": { schema: ProviderResponseSchema, title: "tracefetch.provider-response.v1" },
  "provider-describe-request": {
    schema: DescribeRequestSchema,
    title: PROVIDER_DESCRIBE_REQUEST_VERSION,
  },
  "provider-describe": { schema: DescribeResponseSchema, title: PROVIDER_DESCRIBE_VERSION },
  "provider-health-request": {
    schema: HealthRequestSchema,
    title: PROVIDER_HEALTH_REQUEST_VERSION,
  },
  "provider-health": { schema: HealthResponseSchema, title: PROVIDER_HEALTH_VERSION },
  "provider-expand-request": {
    schema: ExpandRequestSchema,
    title: PROVIDER_EXPAND_REQUEST_VERSION,
  },
  "provider-expand": { schema: ExpandResponseSchema, title: PROVIDER_EXPAND_VERSION },
  "provider-refresh-request": {
    schema: RefreshRequestSchema,
    title: PROVIDER_REFRESH_REQUEST_VERSION,
  },
  "provider-stats-request": { schema: StatsRequestSchema, title: PROVIDER_STATS_REQUEST_VERSION },
  "provider-stats": { schema: StatsResponseSchema, title: PROVIDER_STATS_VERSION },
  "search-request": { schema: SearchRequestSchema, title: "TraceFetch Edge search request" },
  "fetch-request": { schema: FetchRequestSchema, title: "TraceFetch Edge fetch request" },
  "verify-request": { schema: VerifyRequestSchema, title: "TraceFetch Edge verify request" },
  evidence: { schema: FetchedEvidenceSchema, title: "TraceFetch Edge evidence" },
  envelope: { schema: EnvelopeSchema, title: "TraceFetch Edge envelope" },
  trace: { schema: TraceSchema, title: TRACE_VERSION },
  "trace-batch": { schema: TraceBatchSchema, title: TRACE_BATCH_VERSION },
};

export function renderSchema(name: string): string {
  const entry = SCHEMAS[name];
  if (!entry) throw new Error(`no schema named ${name}`);
  const json = toJsonSchema(entry.schema, JSON_SCHEMA_CONVERSION);
  const document = {
    $schema: json.$schema,
    $id: `https://tracefetch.dev/schemas/${name}.json`,
    title: entry.title,
    ...json,
  };
  return `${JSON.stringify(document, null, 2)}\n`;
}

async function main() {
  const check = process.argv.includes("--check");
  const stale: string[] = [];
  for (const name of Object.keys(SCHEMAS)) {
    const path = new URL(`../schemas/${name}.json`, import.meta.url);
    const want = renderSchema(name);
    if (check) {
      const have = await readFile(path, "utf8").catch(() => "");
      if (have !== want) stale.push(name);
    } else {
      await writeFile(path, want);
    }
  }
  if (!(await genMcpTools(check))) stale.push("mcp-tools");
  if (!(await genOpenApi(check))) stale.push("openapi");
  if (stale.length > 0) {
    console.error(`schemas/ is stale for: ${stale.join(", ")}; run npm run gen:schemas`);
    process.exit(1);
  }
}

// Run only as a script: importing renderSchema must not rewrite schemas/.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
