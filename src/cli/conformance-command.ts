/**
 * `tracefetch conformance URL --name N --scope S`: the provider kit's conformance checks against
 * one endpoint. People get the transcript; machine mode an envelope (command `validate`, since it
 * validates a provider) whose result lists each case. A failing case is exit 2, `fix_input`, as
 * for an invalid manifest: the provider is the input to fix.
 */
import { buildEnvelope } from "../envelope/build-envelope.ts";
import { type ConformanceReport, runConformance } from "../kit/conformance.ts";
import { formatTranscript } from "../kit/format-transcript.ts";
import type { Envelope } from "../protocol/envelope-schema.ts";
import { MAX_TIMEOUT_MS, MIN_TIMEOUT_MS } from "../protocol/limits.ts";
import { BINDING_PATTERN, NAME_PATTERN } from "../protocol/manifest-schema.ts";
import { endpointProblem } from "../protocol/validate-manifest.ts";
import type { CliContext, Reply } from "./cli-context.ts";
import { parseCommandArgs } from "./parse-command-args.ts";
import { problemReply } from "./usage-reply.ts";

export async function conformanceCommand(args: string[], ctx: CliContext): Promise<Reply> {
  const { requestId } = ctx;
  const refuse = (message: string, field: string) =>
    problemReply("validate", "invalid_field", requestId, message, field);
  const argv = parseCommandArgs("conformance", "validate", args, ctx, {
    name: { type: "string" },
    scope: { type: "string" },
    query: { type: "string" },
    "timeout-ms": { type: "string" },
    "token-env": { type: "string" },
  });
  if (!argv.ok) return argv.reply;
  const { values, positionals } = argv;
  if (positionals.length !== 1) return refuse("give the provider's endpoint URL", "endpoint");
  const endpoint = positionals[0] as string;
  // The manifest's endpoint rules (loopback allowed, as for a provider under development): a
  // provider the gateway could never call is not worth checking, and a token never crosses http.
  const problem = endpointProblem(endpoint, true);
  if (problem !== null) return refuse(`the endpoint ${problem}`, "endpoint");
  const { name, scope } = values;
  if (name === undefined || !NAME_PATTERN.test(name)) {
    return refuse("--name takes the provider's manifest name (lowercase, like papers)", "name");
  }
  if (scope === undefined || !NAME_PATTERN.test(scope)) {
    return refuse("--scope takes the provider's manifest scope (lowercase, like papers)", "scope");
  }
  let timeoutMs: number | undefined;
  if (values["timeout-ms"] !== undefined) {
    timeoutMs = Number(values["timeout-ms"]);
    if (!Number.isInteger(timeoutMs) || timeoutMs < MIN_TIMEOUT_MS || timeoutMs > MAX_TIMEOUT_MS) {
      return refuse(
        `--timeout-ms takes an integer from ${MIN_TIMEOUT_MS} to ${MAX_TIMEOUT_MS}`,
        "timeout-ms",
      );
    }
  }
  const headers: Record<string, string> = {};
  const tokenEnv = values["token-env"];
  if (tokenEnv !== undefined) {
    if (!BINDING_PATTERN.test(tokenEnv)) {
      return refuse(`--token-env takes a variable's name, not "${tokenEnv}"`, "token-env");
    }
    const token = ctx.env[tokenEnv]?.trim();
    if (!token) return refuse(`$${tokenEnv} is not set`, "token-env");
    headers.authorization = `Bearer ${token}`;
  }

  const report = await runConformance(endpoint, {
    name,
    scope,
    fetch: ctx.fetch,
    headers,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    ...(values.query === undefined ? {} : { query: values.query }),
  });
  const envelope = reportEnvelope(report, requestId);
  return { kind: "envelope", envelope, render: () => formatTranscript(report) };
}

function reportEnvelope(report: ConformanceReport, requestId: string): Envelope {
  const failing = report.cases.filter((c) => c.verdict === "fail");
  const result = {
    endpoint: report.endpoint,
    provider: report.name,
    scope: report.scope,
    passed: report.cases.length - failing.length,
    failed: failing.length,
    cases: report.cases.map((c) => ({
      case: c.case,
      verdict: c.verdict,
      expects: c.expects,
      status: c.response?.status ?? null,
      reasons: c.reasons,
    })),
  };
  if (report.ok) return buildEnvelope("validate", "ok", requestId, { result });
  return buildEnvelope("validate", "invalid_field", requestId, {
    result,
    error: {
      message: `${failing.length} of ${report.cases.length} conformance cases fail: ` +
        failing.map((c) => c.case).join(", "),
      field: "endpoint",
    },
  });
}
