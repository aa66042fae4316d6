/**
 * How every generated document converts a valibot schema to JSON Schema: the files in schemas/
 * and the components of schemas/openapi.json read the same schemas the same way.
 */
import type { ConversionConfig } from "@valibot/to-json-schema";

/**
 * Draft 2020-12, the dialect OpenAPI 3.1 uses too. A `check` is a rule JSON Schema cannot say (a
 * real calendar date, a bound in code points); the document keeps the shape around it, and valibot
 * still enforces the rule.
 */
export const JSON_SCHEMA_CONVERSION: ConversionConfig = {
  target: "draft-2020-12",
  ignoreActions: ["check"],
};
