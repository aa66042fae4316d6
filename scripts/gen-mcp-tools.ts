/**
 * Writes schemas/mcp-tools.json, the MCP endpoint's `tools/list` answer, from the valibot schemas
 * of src/protocol/mcp-tools.ts; scripts/gen-schemas.ts calls it, so `--check` covers it too.
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

export function renderMcpTools(): string {
  const tools = MCP_TOOLS.map((tool) => ({
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: toolSchema(tool.input),
    outputSchema: toolSchema(tool.output),
    annotations: {
      title: tool.title,
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
