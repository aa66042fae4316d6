/**
 * `tracefetch connect URL [--token-env VAR]`: checks that the gateway answers, then saves its URL
 * and the name of the token variable (never the token), and shows what the gateway records of
 * searches (its mining state). Replacing a saved connection to another gateway, and connecting to
 * a gateway whose mining is `undecided`, are a person's decisions: a terminal asks, machine mode
 * answers `human_decision_required`, and so does a person who declines (exit 3: the connection
 * asked for was not saved).
 */
import { buildEnvelope } from "../envelope/build-envelope.ts";
import type { Envelope } from "../protocol/envelope-schema.ts";
import { GATEWAY_STATUS_TIMEOUT_MS } from "../protocol/limits.ts";
import { BINDING_PATTERN } from "../protocol/manifest-schema.ts";
import type { CliContext, Reply } from "./cli-context.ts";
import { callGateway } from "./call-gateway.ts";
import type { Paint } from "./paint.ts";
import { parseCommandArgs } from "./parse-command-args.ts";
import {
  DEFAULT_TOKEN_ENV,
  displayUrl,
  parseGatewayUrl,
  tokenTransportProblem,
} from "./resolve-target.ts";
import { errorCode, readSavedConnection, writeSavedConnection } from "./saved-connection.ts";
import { problemReply } from "./usage-reply.ts";

export async function connectCommand(args: string[], ctx: CliContext): Promise<Reply> {
  const { requestId } = ctx;
  const argv = parseCommandArgs("connect", "connect", args, ctx, {
    "token-env": { type: "string" },
    yes: { type: "boolean", short: "y" },
  }, { one: { message: () => "give the gateway URL: tracefetch connect URL", field: "gateway" } });
  if (!argv.ok) return argv.reply;
  const { values, positionals } = argv;
  const url = parseGatewayUrl(positionals[0] as string);
  if (!url.ok) return problemReply("connect", "invalid_field", requestId, url.message, "gateway");
  const tokenEnv = values["token-env"] ?? DEFAULT_TOKEN_ENV;
  if (!BINDING_PATTERN.test(tokenEnv)) {
    return problemReply(
      "connect",
      "invalid_field",
      requestId,
      `--token-env takes a variable's name (like ${DEFAULT_TOKEN_ENV}), not "${tokenEnv}"`,
      "token-env",
    );
  }
  const gateway = displayUrl(url.url);
  const token = ctx.env[tokenEnv]?.trim() || null;
  if (token !== null) {
    const problem = tokenTransportProblem(url.url, tokenEnv);
    if (problem !== null) {
      return problemReply("connect", "invalid_field", requestId, problem, "gateway");
    }
  }

  const saved = await readSavedConnection(ctx.env);
  const replaces = saved.kind === "saved" &&
    (saved.connection.gateway !== gateway || saved.connection.token_env !== tokenEnv);
  if (replaces && !values.yes) {
    const question = `replace the saved connection to ${saved.connection.gateway} with ${gateway}?`;
    const canAsk = !ctx.machine && ctx.stdinIsTTY && ctx.stderrIsTTY;
    if (!canAsk) {
      return problemReply(
        "connect",
        "human_decision_required",
        requestId,
        `a connection to ${saved.connection.gateway} is saved; run again with --yes to replace it`,
      );
    }
    // Declining is not success: what was asked for (this connection) did not happen.
    if (!(await ctx.confirm(question))) {
      return problemReply(
        "connect",
        "human_decision_required",
        requestId,
        `not replaced: the saved connection to ${saved.connection.gateway} is kept and ` +
          `${gateway} was not saved; run again with --yes to replace it`,
      );
    }
  }

  const status = await callGateway({
    command: "connect",
    target: { base: url.url, token, tokenEnv, source: "flag" },
    route: "v1/status",
    timeoutMs: GATEWAY_STATUS_TIMEOUT_MS,
    requestId,
    fetch: ctx.fetch,
  });
  const result = status.result;
  if (!status.ok || result === undefined || !("service" in result)) {
    // The gateway's own verdict (401, 429, ...) under this command, keeping its request id.
    return {
      kind: "envelope",
      envelope: buildEnvelope(
        "connect",
        status.ok ? "bad_gateway_answer" : status.code,
        status.request_id,
        {
          error: status.error?.field === undefined
            ? {
              message: status.error?.message ??
                `${gateway} answered /v1/status without a status result`,
            }
            : { message: status.error.message, field: status.error.field },
          ...(status.retry_after_ms === undefined ? {} : { retry_after_ms: status.retry_after_ms }),
        },
      ),
    };
  }
  const mining = result.mining === undefined ? undefined : {
    state: result.mining.state,
    configured: result.mining.configured,
    health: result.mining.health,
  };
  if (mining?.state === "undecided" && !values.yes) {
    // Whether to search through a gateway that may start recording is a person's call.
    const canAsk = !ctx.machine && ctx.stdinIsTTY && ctx.stderrIsTTY;
    const what = `${gateway} has a trace sink its operator has not confirmed (mining undecided): ` +
      "once confirmed, a trace of every search is recorded";
    if (!canAsk || !(await ctx.confirm(`${what}. Connect anyway?`))) {
      return problemReply(
        "connect",
        "human_decision_required",
        status.request_id,
        `${what}; ${gateway} was not saved; a person decides: run again with --yes to connect anyway`,
      );
    }
  }
  let savedTo: string;
  try {
    savedTo = await writeSavedConnection(ctx.env, { gateway, token_env: tokenEnv });
  } catch (error) {
    return problemReply(
      "connect",
      "internal_error",
      requestId,
      `could not save the connection (${errorCode(error)}); check the config folder's permissions`,
    );
  }
  const envelope = buildEnvelope("connect", "ok", status.request_id, {
    result: {
      gateway,
      token_env: tokenEnv,
      token_set: token !== null,
      saved_to: savedTo,
      gateway_version: result.version,
      ...(mining === undefined ? {} : { mining }),
    },
  });
  return { kind: "envelope", envelope, render: (paint) => renderConnect(envelope, paint) };
}

function renderConnect(envelope: Envelope, paint: Paint): string {
  const result = envelope.result;
  if (result === undefined || !("saved_to" in result)) return "";
  const token = result.token_set
    ? `the token comes from $${result.token_env}`
    : `$${result.token_env} is not set: calls are anonymous until it is`;
  return `${
    paint.green("connected")
  } to ${result.gateway} (tracefetch-edge ${result.gateway_version}); ` +
    `${token}\nsaved in ${result.saved_to}\n${miningLine(result.mining, paint)}`;
}

/** What the gateway records of searches, as its /v1/status says (docs/envelope.md, "Mining"). */
function miningLine(mining: { state: string; health: string[] } | undefined, paint: Paint): string {
  if (mining === undefined) return "";
  const meaning: Record<string, string> = {
    disabled: "searches are not recorded",
    undecided: "a trace sink is configured, not yet confirmed: nothing is recorded until it is",
    enabled: 'a trace of every search is recorded (docs/security.md, "Search traces")',
    degraded: "a trace of every search is recorded, but the sink is failing",
  };
  const state = mining.state === "disabled" ? mining.state : paint.yellow(mining.state);
  const health = mining.health.map((line) => `\n  ${paint.dim(line)}`).join("");
  return `mining: ${state}: ${meaning[mining.state] ?? ""}${health}\n`;
}
