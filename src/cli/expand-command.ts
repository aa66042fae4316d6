/**
 * `tracefetch expand PROVIDER LOCATOR`: the evidence behind a locator (POST /v1/expand), from the
 * provider that found it (a merged entry's `found_by`). People see the title and the start of the
 * text; --json prints the envelope with the whole text.
 */
import type { Envelope } from "../protocol/envelope-schema.ts";
import { EXPAND_PREVIEW_CHARS, GATEWAY_EXPAND_TIMEOUT_MS } from "../protocol/limits.ts";
import type { CliContext, Reply } from "./cli-context.ts";
import { callGateway } from "./call-gateway.ts";
import type { Paint } from "./paint.ts";
import { parseCommandArgs } from "./parse-command-args.ts";
import { resolveTarget, unreachableHint } from "./resolve-target.ts";
import { problemReply, requestProblemReply } from "./usage-reply.ts";

export async function expandCommand(args: string[], ctx: CliContext): Promise<Reply> {
  const argv = parseCommandArgs("expand", "expand", args, ctx, { gateway: { type: "string" } });
  if (!argv.ok) return argv.reply;
  const { values, positionals } = argv;
  if (positionals.length !== 2) {
    return problemReply(
      "expand",
      "invalid_field",
      ctx.requestId,
      `expand takes PROVIDER and LOCATOR (got ${positionals.length} argument(s)); take both from a search result's found_by and locator`,
    );
  }
  const [provider, locator] = positionals as [string, string];
  const target = await resolveTarget(values.gateway, ctx.env);
  if (!target.ok) return requestProblemReply("expand", target.problem, ctx.requestId);
  const envelope = await callGateway({
    command: "expand",
    target: target.target,
    route: "v1/expand",
    body: JSON.stringify({ provider, locator }),
    timeoutMs: GATEWAY_EXPAND_TIMEOUT_MS,
    requestId: ctx.requestId,
    fetch: ctx.fetch,
    unreachable: unreachableHint(target.target.base, false),
  });
  return { kind: "envelope", envelope, render: (paint) => renderExpand(envelope, paint) };
}

export function renderExpand(envelope: Envelope, paint: Paint): string {
  const result = envelope.result;
  if (result === undefined || !("evidence" in result) || !("provider" in result)) return "";
  const { evidence } = result;
  const chars = Array.from(evidence.text);
  const shown = chars.slice(0, EXPAND_PREVIEW_CHARS).join("");
  const rest = chars.length - EXPAND_PREVIEW_CHARS;
  return [
    paint.bold(evidence.title),
    `${evidence.locator} (${evidence.content_type}, from ${result.provider}, retrieved ${evidence.retrieved_at}${
      evidence.revision === undefined ? "" : `, revision ${evidence.revision}`
    })`,
    "",
    shown,
    ...(rest > 0 ? ["", paint.dim(`... ${rest} more characters; --json prints them all`)] : []),
    "",
  ].join("\n");
}
