/**
 * Writes schemas/mcp-tools.json, the MCP endpoint's `tools/list` answer, from the valibot schemas
 * of src/protocol/mcp-tools.ts; scripts/gen-schemas.ts calls it, so `--check` covers it too. Each
 * input schema is whole (a model writes the arguments); each output schema is shallow (below).
 */
import { readFile, writeFile } from "node:fs/promises";
import { toJsonSchema } from "@valibot/to-json-schema";
import type { GenericSchema } from "valibot";
import { MCP_TOOLS } from "../src/protocol/mcp-tools.ts";

const FILE = new URL("../schemas/mcp-tools.json", import.meta.url);

/**
 * A tool schema as MCP carries it: draft 2020-12, MCP's default dialect, so without `$schema`,
 * which a client validating with an older dialect would refuse to compile.
 */
function toolSchema(schema: GenericSchema): Record<string, unknown> {
  // As for schemas/*.json: a rule JSON Schema cannot say stays with valibot.
  const { $schema: _dialect, ...json } = toJsonSchema(schema, {
    target: "draft-2020-12",
    ignoreActions: ["check"],
  });
  return json;
}

type Json = Record<string, unknown>;

/** Where the whole output is described, for a client that wants more than the shallow schema. */
const WHOLE = "The route's envelope; in full at /schemas/envelope.json";

/**
 * An output schema as tools/list gives it: the envelope's header, with `code` a string (its 70-odd
 * values are in /schemas/envelope.json), and the result's top-level fields by their type alone.
 * Every client sends tools/list to its model, where the whole schemas (17,000 characters for four
 * tools) cost context and say little the description does not; `structuredContent` still
 * validates against this, as a client checks it (docs/decisions.md, "MCP endpoint").
 */
function shallowOutput(full: Json): Json {
  const properties = { ...(full.properties as Record<string, Json>) };
  properties.code = { type: "string" };
  const result = properties.result;
  if (result !== undefined) {
    properties.result = {
      ...result,
      properties: Object.fromEntries(
        Object.entries(result.properties as Record<string, Json>).map(([k, v]) => [k, typeOnly(v)]),
      ),
    };
  }
  return { description: WHOLE, ...full, properties };
}

/** A schema reduced to its JSON type (or types); `{}` when it has none to name. */
function typeOnly(schema: Json): Json {
  const types = new Set<string>();
  const visit = (s: Json) => {
    if (typeof s.type === "string") types.add(s.type);
    else if (Array.isArray(s.type)) { for (const t of s.type) types.add(String(t)); }
    else if ("const" in s) types.add(s.const === null ? "null" : typeof s.const);
    for (const branch of [...(s.anyOf as Json[] ?? []), ...(s.oneOf as Json[] ?? [])]) {
      visit(branch);
    }
  };
  visit(schema);
  const list = [...types].map((t) => (t === "number" && schema.type === "integer" ? "integer" : t));
  return list.length === 0 ? {} : { type: list.length === 1 ? list[0] : list };
}

export function renderMcpTools(): string {
  const tools = MCP_TOOLS.map((tool) => ({
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: toolSchema(tool.input),
    outputSchema: shallowOutput(toolSchema(tool.output)),
    // The title once, as `title`: MCP reads it before annotations' own.
    annotations: {
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: tool.openWorld,
    },
  }));
  return `${JSON.stringify({ tools }, null, 2)}\n`;
}

/** Writes the file, or with `check` only compares it; true when it was already up to date. */
export async function genMcpTools(check: boolean): Promise<boolean> {
  const want = renderMcpTools();
  const have = await readFile(FILE, "utf8").catch(() => "");
  if (!check && have !== want) await writeFile(FILE, want);
  return check ? have === want : true;
}
