/**
 * `tracefetch serve`: the gateway, as `npm start` runs it (the shared launcher over
 * @hono/node-server), with --host, --port and --manifest overriding HOST, PORT and
 * TRACEFETCH_MANIFEST. It prints one line when listening and stops on Ctrl-C.
 */
import { parseArgs } from "node:util";
import { ConfigError } from "../protocol/config-error.ts";
import { launch } from "../runtime/launch.ts";
import { listen } from "../runtime/node-listen.ts";
import { nodePorts } from "../runtime/node-fetch.ts";
import type { CliContext, Reply } from "./cli-context.ts";
import { HELP } from "./help-text.ts";
import { tryParseArgs } from "./try-parse-args.ts";
import { requestProblemReply } from "./usage-reply.ts";

/** Start failures a person can fix, as `npm start` reports them: one line, exit 2. */
const FIXABLE = new Set(["ENOENT", "EADDRINUSE", "EACCES", "EADDRNOTAVAIL"]);

export async function serveCommand(args: string[], ctx: CliContext): Promise<Reply> {
  const argv = tryParseArgs("serve", () =>
    parseArgs({
      args,
      strict: true,
      options: {
        help: { type: "boolean", short: "h" },
        host: { type: "string" },
        port: { type: "string" },
        manifest: { type: "string" },
      },
    }));
  // serve has no envelope of its own; a refused option (`--json` included) is still one.
  if (!argv.ok) return requestProblemReply("unknown", argv.problem, ctx.requestId);
  const { values } = argv.parsed;
  if (values.help) return { kind: "document", stdout: HELP.serve ?? "", exitCode: 0 };
  const overrides: Record<string, string> = {};
  if (values.host !== undefined) overrides.HOST = values.host;
  if (values.port !== undefined) overrides.PORT = values.port;
  if (values.manifest !== undefined) overrides.TRACEFETCH_MANIFEST = values.manifest;
  const stop = ctx.interrupted();
  let running;
  try {
    running = await launch(
      ctx.settings(overrides),
      listen,
      nodePorts(),
      values.manifest !== undefined ? "--manifest" : undefined,
    );
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (error instanceof ConfigError || (typeof code === "string" && FIXABLE.has(code))) {
      return {
        kind: "document",
        stdout: "",
        stderr: `tracefetch serve: ${(error as Error).message}\n`,
        exitCode: 2,
      };
    }
    throw error;
  }
  for (const warning of running.warnings) ctx.writeStderr(`tracefetch serve: ${warning}\n`);
  ctx.writeStdout(`TraceFetch Edge listening on ${running.url} (${running.manifestSource})\n`);
  await new Promise<void>((resolve) => {
    if (stop.aborted) resolve();
    stop.addEventListener("abort", () => resolve(), { once: true });
  });
  await running.close();
  return { kind: "document", stdout: "", exitCode: 0 };
}
