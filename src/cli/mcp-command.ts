/**
 * `tracefetch mcp`: the gateway's MCP tools over stdio, for desktop clients that run a command
 * (docs/mcp.md). It relays to a gateway's `/mcp` (--gateway URL, else the saved connection, else
 * http://127.0.0.1:8787, with the token as `search` sends it), or runs the gateway in this process
 * (--manifest FILE, or the embedded default with --default) and relays to that: the same tools and
 * the same text either way, since both are the `/mcp` route.
 *
 * stdout carries JSON-RPC only: every diagnostic, and a refusal before the relay starts, goes to
 * stderr (exit 2), never an envelope.
 */
import { parseArgs } from "node:util";
import { ConfigError } from "../protocol/config-error.ts";
import { launch, type Launched } from "../runtime/launch.ts";
import { listen } from "../runtime/node-listen.ts";
import { nodePorts } from "../runtime/node-fetch.ts";
import type { CliContext, Reply } from "./cli-context.ts";
import { HELP } from "./help-text.ts";
import { tryParseArgs } from "./try-parse-args.ts";
import { displayUrl, resolveTarget } from "./resolve-target.ts";
import { relayStdio } from "./mcp-relay.ts";

export async function mcpCommand(args: string[], ctx: CliContext): Promise<Reply> {
  const refuse = (message: string): Reply => ({
    kind: "document",
    stdout: "",
    stderr: `tracefetch mcp: ${message}\n`,
    exitCode: 2,
  });
  const argv = tryParseArgs("mcp", () =>
    parseArgs({
      args,
      strict: true,
      options: {
        help: { type: "boolean", short: "h" },
        gateway: { type: "string" },
        manifest: { type: "string" },
        default: { type: "boolean" },
      },
    }));
  if (!argv.ok) return refuse(argv.problem.message);
  const { values } = argv.parsed;
  if (values.help) return { kind: "document", stdout: HELP.mcp ?? "", exitCode: 0 };
  const local = values.manifest !== undefined || values.default === true;
  if (local && values.gateway !== undefined) {
    return refuse("--gateway relays to a gateway; --manifest and --default run one here: pick one");
  }
  if (values.manifest !== undefined && values.default === true) {
    return refuse("--manifest and --default both name the manifest: pick one");
  }
  // Anything a library prints must not reach stdout, which is the client's JSON-RPC channel.
  console.log = console.info = console.debug = (...parts: unknown[]) => console.error(...parts);
  let running: Launched | null = null;
  let endpoint: URL;
  const headers: Record<string, string> = {};
  if (local) {
    try {
      running = await launch(
        ctx.settings({
          HOST: "127.0.0.1",
          PORT: "0",
          TRACEFETCH_MANIFEST: values.manifest ?? "",
        }),
        listen,
        nodePorts(),
        values.manifest !== undefined ? "--manifest" : undefined,
      );
    } catch (error) {
      if (error instanceof ConfigError || (error as { code?: unknown }).code === "ENOENT") {
        return refuse((error as Error).message);
      }
      throw error;
    }
    for (const warning of running.warnings) ctx.writeStderr(`tracefetch mcp: ${warning}\n`);
    endpoint = new URL("/mcp", running.url);
    ctx.writeStderr(`tracefetch mcp: serving ${running.manifestSource} in process over stdio\n`);
  } else {
    const resolved = await resolveTarget(values.gateway, ctx.env);
    if (!resolved.ok) return refuse(resolved.problem.message);
    const { base, token } = resolved.target;
    endpoint = new URL("mcp", base);
    if (token !== null) headers.authorization = `Bearer ${token}`;
    ctx.writeStderr(`tracefetch mcp: relaying stdio to ${displayUrl(base)}/mcp\n`);
  }
  try {
    await relayStdio(ctx.stdin(), {
      post: (body, h, signal) =>
        ctx.fetch(endpoint, { method: "POST", headers: h, body, signal, redirect: "manual" }),
      headers,
      write: (line) => ctx.writeStdout(`${line}\n`),
      log: (line) => ctx.writeStderr(`${line}\n`),
    });
  } finally {
    await running?.close();
  }
  return { kind: "document", stdout: "", exitCode: 0 };
}
