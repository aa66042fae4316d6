/**
 * `tracefetch search QUERY | -`: validates the request as the gateway would, then asks the gateway
 * (streaming events for the progress line in human mode) or runs the core in process
 * (`--manifest`).
 */
import type { Envelope } from "../protocol/envelope-schema.ts";
import { GATEWAY_GRACE_MS } from "../protocol/limits.ts";
import {
  numberFromText,
  parseSearchRequest,
  type SearchRequest,
} from "../protocol/search-request.ts";
import type { CliContext, Reply } from "./cli-context.ts";
import { callGateway } from "./call-gateway.ts";
import { localSearch } from "./local-search.ts";
import { parseCommandArgs } from "./parse-command-args.ts";
import { progressLine } from "./progress-line.ts";
import { readStdinRequest } from "./read-stdin-request.ts";
import { renderSearch } from "./render-search.ts";
import { resolveTarget, unreachableHint } from "./resolve-target.ts";
import { problemReply, requestProblemReply } from "./usage-reply.ts";

/** Options that shape the request; with `search -` the request comes from stdin alone. */
const REQUEST_OPTIONS = [
  "scope",
  "provider",
  "limit",
  "tier",
  "view",
  "timeout-ms",
  "max-age-seconds",
] as const;

export async function searchCommand(args: string[], ctx: CliContext): Promise<Reply> {
  const { requestId } = ctx;
  const argv = parseCommandArgs("search", "search", args, ctx, {
    gateway: { type: "string" },
    manifest: { type: "string" },
    "allow-sensitive": { type: "boolean" },
    scope: { type: "string" },
    provider: { type: "string", multiple: true },
    limit: { type: "string" },
    tier: { type: "string" },
    view: { type: "string" },
    "timeout-ms": { type: "string" },
    "max-age-seconds": { type: "string" },
  });
  if (!argv.ok) return argv.reply;
  const { values, positionals } = argv;
  if (values.manifest !== undefined && values.gateway !== undefined) {
    return problemReply(
      "search",
      "invalid_field",
      requestId,
      "give --manifest (in process) or --gateway, not both",
      "manifest",
    );
  }
  if (values["allow-sensitive"] && values.manifest === undefined) {
    return problemReply(
      "search",
      "invalid_field",
      requestId,
      "--allow-sensitive applies to in-process searches (--manifest); a gateway decides from your token",
      "allow-sensitive",
    );
  }

  let request: SearchRequest;
  let input: Record<string, unknown>;
  if (positionals.length === 1 && positionals[0] === "-") {
    const given = REQUEST_OPTIONS.find((name) => values[name] !== undefined);
    if (given !== undefined) {
      return problemReply(
        "search",
        "invalid_field",
        requestId,
        `--${given} cannot be combined with "search -": put it in the request on stdin`,
        given,
      );
    }
    const read = await readStdinRequest(ctx.stdin());
    if (!read.ok) return requestProblemReply("search", read.problem, requestId);
    ({ request, input } = read);
  } else {
    input = { query: positionals.join(" ") };
    if (values.scope !== undefined) input.scope = values.scope;
    if (values.provider !== undefined) {
      // Repeated or comma-separated; spaces after a comma are forgiven on a command line.
      input.providers = values.provider.flatMap((list) => list.split(","))
        .map((name) => name.trim())
        .filter((name) => name !== "");
    }
    if (values.limit !== undefined) input.limit = numeric(values.limit);
    if (values.tier !== undefined) input.tier = values.tier;
    if (values.view !== undefined) input.view = values.view;
    if (values["timeout-ms"] !== undefined) input.timeout_ms = numeric(values["timeout-ms"]);
    const maxAge = values["max-age-seconds"];
    if (maxAge !== undefined) input.max_age_seconds = numeric(maxAge);
    const parsed = parseSearchRequest(input);
    if (!parsed.ok) return requestProblemReply("search", parsed.problem, requestId);
    request = parsed.request;
  }

  const progress = progressLine(!ctx.machine && ctx.stderrIsTTY, ctx.writeStderr, ctx.stderrPaint);
  let envelope: Envelope;
  try {
    if (values.manifest !== undefined) {
      envelope = await localSearch(request, {
        manifestPath: values.manifest,
        allowSensitive: values["allow-sensitive"] ?? false,
        settings: () => ctx.settings(),
        requestId,
        signal: ctx.interrupted(),
        hooks: {
          onPlan: progress.plan,
          onAttempt: (_index, attempt) =>
            progress.answered(attempt.provider, attempt.outcome === "success"),
        },
      });
    } else {
      const target = await resolveTarget(values.gateway, ctx.env);
      if (!target.ok) return requestProblemReply("search", target.problem, requestId);
      envelope = await callGateway({
        command: "search",
        target: target.target,
        route: "v1/search",
        body: JSON.stringify(input),
        timeoutMs: request.timeout_ms + GATEWAY_GRACE_MS,
        requestId,
        fetch: ctx.fetch,
        unreachable: unreachableHint(target.target.base, true),
        // Machine mode reads the plain envelope: the gateway's answer exactly, nothing rebuilt.
        ...(ctx.machine ? {} : {
          stream: (event) => {
            if (event.event === "plan") progress.plan(event.decision);
            if (event.event === "provider") {
              progress.answered(event.attempt.provider, event.attempt.outcome === "success");
            }
          },
        }),
      });
    }
  } finally {
    progress.clear();
  }
  return { kind: "envelope", envelope, render: (paint) => renderSearch(envelope, paint) };
}

/** As the GET form reads numbers: the JSON number grammar, anything else stays text (and is refused). */
const numeric = numberFromText;
