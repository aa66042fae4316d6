/**
 * The JSON Schemas of the OpenAPI document, spelt as OpenAPI 3.1 viewers read them best, with the
 * same meaning: a nullable field as `type: [T, "null"]` rather than an `anyOf` with a null branch
 * (a nullable `enum` lists null among its values too, or null would fail the enum), a `const` with
 * its type beside it, and "any value" as `true` rather than the empty schema.
 */
type Json = unknown;

const TYPE_OF: Record<string, string> = { string: "string", boolean: "boolean" };

export function oasSpelling(value: Json): Json {
  if (Array.isArray(value)) return value.map(oasSpelling);
  if (typeof value !== "object" || value === null) return value;
  const out: Record<string, Json> = {};
  for (const [key, member] of Object.entries(value)) out[key] = oasSpelling(member);
  const branches = out.anyOf;
  if (Array.isArray(branches) && branches.length === 2 && Object.keys(out).length === 1) {
    const [some, none] = branches as Array<Record<string, Json>>;
    if (isNullType(none) && typeof some?.type === "string") {
      const values = Array.isArray(some.enum) ? { enum: [...some.enum, null] } : {};
      return { ...some, type: [some.type, "null"], ...values };
    }
  }
  if ("const" in out && !("type" in out)) out.type = constType(out.const);
  const extra = out.additionalProperties;
  if (typeof extra === "object" && extra !== null && Object.keys(extra).length === 0) {
    out.additionalProperties = true;
  }
  return out;
}

function isNullType(schema: Record<string, Json> | undefined): boolean {
  return schema !== undefined && Object.keys(schema).length === 1 && schema.type === "null";
}

function constType(value: Json): string {
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  const type = TYPE_OF[typeof value];
  if (type === undefined) {
    throw new Error(`no JSON Schema type for the const ${JSON.stringify(value)}`);
  }
  return type;
}
