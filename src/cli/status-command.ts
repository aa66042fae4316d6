/** `tracefetch status`: the gateway's status envelope (GET /v1/status), as it sent it. */
import type { Envelope } from "../protocol/envelope-schema.ts";
import { GATEWAY_STATUS_TIMEOUT_MS } from "../protocol/limits.ts";
import type { CliContext, Reply } from "./cli-context.ts";
import { callGateway } from "./call-gateway.ts";
import type { Paint } from "./paint.ts";
import { parseCommandArgs } from "./parse-command-args.ts";
import { table } from "./render-search.ts";
import { displayUrl, resolveTarget, unreachableHint } from "./resolve-target.ts";
import { problemReply, requestProblemReply } from "./usage-reply.ts";

export async function statusCommand(args: string[], ctx: CliContext): Promise<Reply> {
  const argv = parseCommandArgs("status", "status", args, ctx, { gateway: { type: "string" } });
  if (!argv.ok) return argv.reply;
  const { values, positionals } = argv;
  if (positionals.length > 0) {
    return problemReply(
      "status",
      "invalid_field",
      ctx.requestId,
      `status takes no arguments (got "${positionals[0]}")`,
    );
  }
  const target = await resolveTarget(values.gateway, ctx.env);
  if (!target.ok) return requestProblemReply("status", target.problem, ctx.requestId);
  const envelope = await callGateway({
    command: "status",
    target: target.target,
    route: "v1/status",
    timeoutMs: GATEWAY_STATUS_TIMEOUT_MS,
    requestId: ctx.requestId,
    fetch: ctx.fetch,
    unreachable: unreachableHint(target.target.base, false),
  });
  const where = displayUrl(target.target.base);
  return { kind: "envelope", envelope, render: (paint) => renderStatus(envelope, where, paint) };
}

export function renderStatus(envelope: Envelope, where: string, paint: Paint): string {
  const result = envelope.result;
  if (result === undefined || !("service" in result)) return "";
  const rows = result.providers.map((p) => [
    p.name,
    p.state === "ready" ? paint.green(p.state) : paint.yellow(p.state),
    p.state === "suspended"
      ? `until ${p.until ?? "?"}, after ${p.consecutive_failures ?? 0} consecutive failures`
      : "",
  ]);
  return [
    `${paint.bold(result.service)} ${result.version} at ${where}`,
    ...table(null, rows, paint),
    `searches in flight: ${result.searches_in_flight} of ${result.max_inflight}; ` +
    `at most ${result.max_providers} providers per search`,
    "",
  ].join("\n");
}
