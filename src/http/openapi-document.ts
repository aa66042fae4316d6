/**
 * The OpenAPI document served at /openapi.json, generated at build time (scripts/gen-openapi.ts)
 * into schemas/openapi.json. The gateway imports this module only when the document is asked for,
 * so the Worker ships it as a module of its own.
 */
import document from "../../schemas/openapi.json" with { type: "json" };

/** The file's text, byte for byte: the generator writes two-space JSON and a final newline. */
export const OPENAPI_TEXT = `${JSON.stringify(document, null, 2)}\n`;
