/**
 * `tracefetch validate MANIFEST`: the gateway's manifest rules, offline. Invalid is exit 2 with
 * every issue in `result.issues`; `error.field` names the first.
 */
import { buildEnvelope } from "../envelope/build-envelope.ts";
import type { Envelope } from "../protocol/envelope-schema.ts";
import { formatManifestIssues } from "../protocol/validate-manifest.ts";
import type { CliContext, Reply } from "./cli-context.ts";
import type { Paint } from "./paint.ts";
import { parseCommandArgs } from "./parse-command-args.ts";
import { checkManifestFile, envSettings } from "./read-manifest-file.ts";
import { problemReply } from "./usage-reply.ts";

export async function validateCommand(args: string[], ctx: CliContext): Promise<Reply> {
  const argv = parseCommandArgs("validate", "validate", args, ctx, {});
  if (!argv.ok) return argv.reply;
  const { positionals } = argv;
  if (positionals.length !== 1) {
    return problemReply(
      "validate",
      "invalid_field",
      ctx.requestId,
      "give one manifest file",
      "manifest",
    );
  }
  const path = positionals[0] as string;
  const env = envSettings(ctx);
  if (!env.ok) return problemReply("validate", "invalid_field", ctx.requestId, env.message);
  const checked = await checkManifestFile(path, env.read.env.allowLoopback);
  const envelope: Envelope = checked.ok
    ? buildEnvelope("validate", "ok", ctx.requestId, {
      result: {
        manifest: path,
        valid: true,
        providers: checked.manifest.providers.length,
        issues: [],
      },
    })
    : buildEnvelope("validate", checked.code, ctx.requestId, {
      error: {
        message: `${path} is not a valid manifest: ${
          formatManifestIssues(checked.issues.slice(0, 1))
        }${checked.issues.length > 1 ? ` (and ${checked.issues.length - 1} more)` : ""}`,
        field: checked.issues[0]?.field ?? "manifest",
      },
      result: { manifest: path, valid: false, providers: 0, issues: checked.issues },
    });
  return { kind: "envelope", envelope, render: (paint) => renderValidate(envelope, paint) };
}

function renderValidate(envelope: Envelope, paint: Paint): string {
  const result = envelope.result;
  if (result === undefined || !("valid" in result)) return "";
  if (result.valid) {
    return `${result.manifest}: ${paint.green("valid")}, ${result.providers} providers\n`;
  }
  const lines = result.issues.map((i) =>
    `  ${i.provider ? `provider "${i.provider}": ` : ""}${paint.bold(i.field)}: ${i.message}`
  );
  return `${result.manifest}: ${paint.red(`${result.issues.length} problem(s)`)}\n${
    lines.join("\n")
  }\n`;
}
