/**
 * `tracefetch doctor`: checks the configuration (the saved connection, the token variable,
 * TRACEFETCH_MANIFEST) and reaches the gateway, listing every problem with its code and action.
 * The envelope's code is the first problem's, so its exit code and action lead to the first fix.
 */
import { codeRow } from "../envelope/code-table.ts";
import { buildEnvelope } from "../envelope/build-envelope.ts";
import type { EnvelopeCode } from "../protocol/codes.ts";
import type { DoctorCheck, Envelope, ProviderState } from "../protocol/envelope-schema.ts";
import { GATEWAY_DOCTOR_TIMEOUT_MS } from "../protocol/limits.ts";
import { formatManifestIssues } from "../protocol/validate-manifest.ts";
import type { CliContext, Reply } from "./cli-context.ts";
import { callGateway } from "./call-gateway.ts";
import type { Paint } from "./paint.ts";
import { parseCommandArgs } from "./parse-command-args.ts";
import { checkManifestFile, checkManifestText, envSettings } from "./read-manifest-file.ts";
import { table } from "./render-search.ts";
import { displayUrl, resolveTarget, unreachableHint } from "./resolve-target.ts";

export async function doctorCommand(args: string[], ctx: CliContext): Promise<Reply> {
  const argv = parseCommandArgs("doctor", "doctor", args, ctx, { gateway: { type: "string" } }, {
    positionals: false,
  });
  if (!argv.ok) return argv.reply;
  const { values } = argv;

  const checks: DoctorCheck[] = [];
  const check = (name: DoctorCheck["check"], code: EnvelopeCode, message: string) =>
    checks.push({ check: name, ok: code === "ok", code, action: codeRow(code).action, message });

  const target = await resolveTarget(values.gateway, ctx.env);
  const saved = target.saved;
  switch (saved.kind) {
    case "saved":
      check(
        "connection",
        "ok",
        `${saved.path}: ${saved.connection.gateway}, token from $${saved.connection.token_env}`,
      );
      break;
    case "none":
      check("connection", "ok", `none saved (${saved.path}); tracefetch connect URL saves one`);
      break;
    case "broken":
      check(
        "connection",
        "invalid_field",
        `${saved.path} ${saved.message}; run tracefetch connect URL again`,
      );
      break;
    default: {
      const never: never = saved;
      throw new Error(`unhandled saved connection ${JSON.stringify(never)}`);
    }
  }
  if (target.ok) {
    const { tokenEnv, token } = target.target;
    check(
      "token",
      "ok",
      token === null ? `$${tokenEnv} is not set: calls are anonymous` : `$${tokenEnv} is set`,
    );
  } else {
    switch (target.refused) {
      case "saved_connection":
        // Already reported by the connection check, when the file itself is the problem.
        if (saved.kind !== "broken") {
          check("connection", target.problem.code, target.problem.message);
        }
        break;
      case "gateway_url":
        check("gateway", target.problem.code, target.problem.message);
        break;
      case "token_transport":
        check("token", target.problem.code, target.problem.message);
        break;
      default: {
        const never: never = target.refused;
        throw new Error(`unhandled refusal ${never}`);
      }
    }
  }

  const env = envSettings(ctx);
  const manifest = env.ok ? env.read.env.manifest : null;
  if (!env.ok) {
    check("manifest", "invalid_field", `a gateway would refuse this environment: ${env.message}`);
  } else if (manifest !== null) {
    const { allowLoopback } = env.read.env;
    const inline = manifest.startsWith("{");
    const checked = inline
      ? checkManifestText(manifest, allowLoopback)
      : await checkManifestFile(manifest, allowLoopback, "TRACEFETCH_MANIFEST");
    const where = inline ? "TRACEFETCH_MANIFEST (inline)" : `TRACEFETCH_MANIFEST (${manifest})`;
    if (checked.ok) {
      check("manifest", "ok", `${where}: valid, ${checked.manifest.providers.length} providers`);
    } else {
      check("manifest", checked.code, `${where}: ${formatManifestIssues(checked.issues)}`);
    }
  }

  let gateway = values.gateway ?? "";
  if (target.ok) {
    gateway = displayUrl(target.target.base);
    const call = (route: string) =>
      callGateway({
        command: "doctor",
        target: target.target,
        route,
        timeoutMs: GATEWAY_DOCTOR_TIMEOUT_MS,
        requestId: ctx.requestId,
        fetch: ctx.fetch,
        unreachable: unreachableHint(target.target.base, false),
      });
    // A gateway from before /v1/doctor answers it not_found; its /v1/status still says enough.
    let status = await call("v1/doctor");
    if (status.code === "not_found") status = await call("v1/status");
    const result = status.result;
    const providers = status.ok ? providerStates(result) : null;
    if (result !== undefined && providers !== null) {
      const ready = providers.filter((p) => p.state === "ready").length;
      // A suspended or unhealthy provider is the gateway's news, not a configuration problem.
      const suspended = providers.filter((p) => p.state === "suspended").map((p) =>
        `${p.name} until ${p.until ?? "?"} (${p.consecutive_failures ?? 0} consecutive failures)`
      );
      const unhealthy = providers.filter((p) =>
        p.health !== undefined && p.health.status !== "ok" && p.health.status !== "unknown"
      ).map((p) =>
        `${p.name} ${p.health?.status}${
          p.health?.diagnostics[0] === undefined ? "" : ` (${p.health.diagnostics[0]})`
        }`
      );
      const about = "service" in result ? ` ${result.service} ${result.version},` : "";
      check(
        "gateway",
        "ok",
        `${gateway} answers:${about} ${ready} of ${providers.length} providers ready${
          suspended.length === 0 ? "" : `; suspended: ${suspended.join(", ")}`
        }${unhealthy.length === 0 ? "" : `; not healthy: ${unhealthy.join(", ")}`}`,
      );
    } else {
      check(
        "gateway",
        status.ok ? "bad_gateway_answer" : status.code,
        status.error?.message ?? `${gateway} answered /v1/doctor without a provider list`,
      );
    }
  }

  const problems = checks.filter((c) => !c.ok);
  const first = problems[0];
  const envelope = buildEnvelope("doctor", first?.code ?? "ok", ctx.requestId, {
    result: { gateway, checks },
    ...(first === undefined ? {} : {
      error: { message: `${problems.length} problem(s); the first: ${first.message}` },
    }),
  });
  return { kind: "envelope", envelope, render: (paint) => renderDoctor(envelope, paint) };
}

/** The provider list of a /v1/doctor or /v1/status result, or null for any other answer. */
function providerStates(result: Envelope["result"]): ProviderState[] | null {
  if (result === undefined) return null;
  if ("service" in result) return result.providers;
  const doctor = "providers" in result && Array.isArray(result.providers) && !("tiers" in result);
  return doctor ? result.providers as ProviderState[] : null;
}

function renderDoctor(envelope: Envelope, paint: Paint): string {
  const result = envelope.result;
  if (result === undefined || !("checks" in result)) return "";
  const rows = result.checks.map((c) => [
    c.ok ? paint.green("ok") : paint.red("problem"),
    c.check,
    c.ok ? c.message : `${c.message} ${paint.bold(`(${c.code}; next: ${c.action})`)}`,
  ]);
  return `${table(null, rows, paint).join("\n")}\n`;
}
