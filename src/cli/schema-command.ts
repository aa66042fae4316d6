/** `tracefetch schema NAME`: the raw JSON Schema document, byte for byte as in schemas/. */
import { SCHEMA_DOCUMENTS } from "../protocol/schema-documents.ts";
import type { CliContext, Reply } from "./cli-context.ts";
import { parseCommandArgs } from "./parse-command-args.ts";
import { problemReply } from "./usage-reply.ts";

export function schemaCommand(args: string[], ctx: CliContext): Promise<Reply> {
  return Promise.resolve(schema(args, ctx));
}

function schema(args: string[], ctx: CliContext): Reply {
  const argv = parseCommandArgs("schema", "schema", args, ctx, {});
  if (!argv.ok) return argv.reply;
  const { positionals } = argv;
  const names = Object.keys(SCHEMA_DOCUMENTS).join(", ");
  if (positionals.length !== 1) {
    return problemReply(
      "schema",
      "invalid_field",
      ctx.requestId,
      `give one schema name: ${names}`,
      "name",
    );
  }
  const name = (positionals[0] as string).replace(/\.json$/, "");
  const document = Object.hasOwn(SCHEMA_DOCUMENTS, name) ? SCHEMA_DOCUMENTS[name] : undefined;
  if (document === undefined) {
    return problemReply(
      "schema",
      "not_found",
      ctx.requestId,
      `there is no schema "${name}"; try ${names}`,
      "name",
    );
  }
  // scripts/gen-schemas.ts writes JSON.stringify(document, null, 2) and a newline: the same bytes.
  return { kind: "document", stdout: `${JSON.stringify(document, null, 2)}\n`, exitCode: 0 };
}
