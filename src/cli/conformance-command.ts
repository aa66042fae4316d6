/**
 * `tracefetch conformance URL [--name N --scope S]`: the provider kit's conformance checks against
 * one endpoint (`npm run conformance` runs this command). People get the transcript; machine mode
 * an envelope whose result lists each case. A failing case is exit 2, `invalid_field`, `fix_input`,
 * as for an invalid manifest: the provider is the input to fix. Without a name and scope the
 * `identity` case is not checked (never passed) and the result says what the provider calls itself.
 */
import { buildEnvelope } from "../envelope/build-envelope.ts";
import { type ConformanceReport, runConformance } from "../kit/conformance.ts";
import { formatTranscript } from "../kit/format-transcript.ts";
import type { Envelope } from "../protocol/envelope-schema.ts";
import { MAX_QUERY_CHARS, MAX_TIMEOUT_MS, MIN_TIMEOUT_MS } from "../protocol/limits.ts";
import { BINDING_PATTERN, NAME_PATTERN } from "../protocol/manifest-schema.ts";
import { endpointProblem } from "../protocol/url-policy.ts";
import type { CliContext, Reply } from "./cli-context.ts";
import { parseCommandArgs } from "./parse-command-args.ts";
import { problemReply } from "./usage-reply.ts";
import { checkManifestEntry } from "./conformance-entry.ts";

export async function conformanceCommand(args: string[], ctx: CliContext): Promise<Reply> {
  const { requestId } = ctx;
  const refuse = (message: string, field: string) =>
    problemReply("conformance", "invalid_field", requestId, message, field);
  const argv = parseCommandArgs("conformance", "conformance", args, ctx, {
    name: { type: "string" },
    scope: { type: "string" },
    query: { type: "string" },
    "timeout-ms": { type: "string" },
    "token-env": { type: "string" },
    manifest: { type: "string" },
    provider: { type: "string" },
  });
  if (!argv.ok) return argv.reply;
  const { values, positionals } = argv;
  if (values.manifest !== undefined || values.provider !== undefined) {
    return await entryCommand(values, positionals, ctx);
  }
  if (positionals.length !== 1) return refuse("give the provider's endpoint URL", "endpoint");
  const endpoint = positionals[0] as string;
  // The manifest's endpoint rules (loopback allowed, as for a provider under development): a
  // provider the gateway could never call is not worth checking, and a token never crosses http.
  const problem = endpointProblem(endpoint, true);
  if (problem !== null) return refuse(`the endpoint ${problem}`, "endpoint");
  const { name, scope, query } = values;
  if (name !== undefined && !NAME_PATTERN.test(name)) {
    return refuse("--name takes the provider's manifest name (lowercase, like papers)", "name");
  }
  if (scope !== undefined && !NAME_PATTERN.test(scope)) {
    return refuse("--scope takes the provider's manifest scope (lowercase, like papers)", "scope");
  }
  if ((name === undefined) !== (scope === undefined)) {
    return refuse(
      "give --name and --scope together (what the manifest declares), or neither to see what " +
        "the provider calls itself",
      name === undefined ? "name" : "scope",
    );
  }
  if (query !== undefined && (query.trim() === "" || query.length > MAX_QUERY_CHARS)) {
    return refuse(`--query takes 1 to ${MAX_QUERY_CHARS} characters`, "query");
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
    ...(name === undefined || scope === undefined ? {} : { name, scope }),
    fetch: ctx.fetch,
    headers,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    ...(query === undefined ? {} : { query }),
  });
  const envelope = reportEnvelope(report, requestId);
  return { kind: "envelope", envelope, render: () => formatTranscript(report) };
}

/** `--manifest FILE --provider NAME`: the entry's endpoint, name, scope and transport. */
async function entryCommand(
  values: Record<string, string | boolean | undefined>,
  positionals: string[],
  ctx: CliContext,
): Promise<Reply> {
  const refuse = (message: string, field: string) =>
    problemReply("conformance", "invalid_field", ctx.requestId, message, field);
  const { manifest, provider, name, scope, query } = values as Record<string, string | undefined>;
  if (manifest === undefined || provider === undefined) {
    return refuse(
      "give --manifest FILE and --provider NAME together",
      manifest === undefined ? "manifest" : "provider",
    );
  }
  if (positionals.length > 0 || name !== undefined || scope !== undefined) {
    return refuse(
      "--manifest and --provider take the endpoint, name and scope from the entry: leave out the URL, --name and --scope",
      "manifest",
    );
  }
  const headers: Record<string, string> = {};
  const tokenEnv = values["token-env"] as string | undefined;
  if (tokenEnv !== undefined) {
    const token = BINDING_PATTERN.test(tokenEnv) ? ctx.env[tokenEnv]?.trim() : undefined;
    if (!token) {
      return refuse(`--token-env names no variable that is set ("${tokenEnv}")`, "token-env");
    }
    headers.authorization = `Bearer ${token}`;
  }
  const timeout = values["timeout-ms"] === undefined ? undefined : Number(values["timeout-ms"]);
  if (
    timeout !== undefined &&
    (!Number.isInteger(timeout) || timeout < MIN_TIMEOUT_MS || timeout > MAX_TIMEOUT_MS)
  ) {
    return refuse(
      `--timeout-ms takes an integer from ${MIN_TIMEOUT_MS} to ${MAX_TIMEOUT_MS}`,
      "timeout-ms",
    );
  }
  const checked = await checkManifestEntry({
    manifest,
    provider,
    env: ctx.env,
    fetch: ctx.fetch,
    headers,
    ...(timeout === undefined ? {} : { timeoutMs: timeout }),
    ...(query === undefined ? {} : { query }),
  });
  if (!checked.ok) return refuse(checked.message, checked.field);
  const { report } = checked;
  return {
    kind: "envelope",
    envelope: reportEnvelope(report, ctx.requestId),
    render: () => formatTranscript(report),
  };
}

function reportEnvelope(report: ConformanceReport, requestId: string): Envelope {
  const failing = report.cases.filter((c) => c.verdict === "fail");
  const count = (verdict: string) => report.cases.filter((c) => c.verdict === verdict).length;
  const result = {
    endpoint: report.endpoint,
    provider: report.name,
    scope: report.scope,
    reported: report.reported,
    query: report.query,
    passed: count("pass"),
    failed: failing.length,
    not_checked: count("not_checked"),
    cases: report.cases.map((c) => ({
      case: c.case,
      verdict: c.verdict,
      expects: c.expects,
      status: c.response?.status ?? null,
      reasons: c.reasons,
    })),
  };
  if (report.ok) return buildEnvelope("conformance", "ok", requestId, { result });
  return buildEnvelope("conformance", "invalid_field", requestId, {
    result,
    error: {
      message: `${failing.length} of ${report.cases.length} conformance cases fail: ` +
        failing.map((c) => c.case).join(", "),
      field: "endpoint",
    },
  });
}
