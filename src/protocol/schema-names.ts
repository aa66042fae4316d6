/** The names of the JSON Schemas this project publishes (schemas/). */

/**
 * The JSON Schemas served at /schemas/{name}.json, in the order `GET /` lists them. Their documents
 * (schema-documents.ts) are loaded only when one is asked for: most isolates never serve one.
 */
export const SCHEMA_NAMES = [
  "envelope",
  "provider-manifest",
  "provider-request",
  "provider-response",
  "provider-describe-request",
  "provider-describe",
  "provider-health-request",
  "provider-health",
  "provider-expand-request",
  "provider-expand",
  "provider-refresh-request",
  "provider-stats-request",
  "provider-stats",
  "search-request",
  "fetch-request",
  "verify-request",
  "evidence",
  "trace",
  "trace-batch",
] as const;

export type SchemaName = (typeof SCHEMA_NAMES)[number];

export function isSchemaName(name: string): name is SchemaName {
  return (SCHEMA_NAMES as readonly string[]).includes(name);
}
