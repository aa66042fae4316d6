/**
 * serveCli(cli): what a provider's command line needs on Node: its own flags plus `--port`,
 * `--host` and `--help`; the usage on `--help` (exit 0), and after the problem on a configuration
 * it refuses (exit 2); then the listener on HOST:PORT.
 */
import { parseArgs } from "node:util";
import { ConfigError } from "../../protocol/config-error.ts";
import type { FetchHandler } from "../listener.ts";
import { listen, type Listening } from "./listen.ts";

export type ServeCli<F extends string, T extends { fetch: FetchHandler }> = {
  /** The program's name in its messages, e.g. "provider:papers" (an npm script) or "my-provider". */
  script: string;
  usage: string;
  /** The provider's own flags; each takes a value. */
  flags: readonly F[];
  /** Checks the flags and builds what to serve; a ConfigError is the operator's to fix. */
  configure: (values: { [K in F]?: string }) => T | Promise<T>;
  /** The arguments to parse; the process's own (after the script) when absent. */
  args?: string[];
};

export type Serving<T> = {
  served: T;
  listening: Listening;
  /** `http://HOST:PORT`, where it listens. */
  base: string;
};

/** Parses the arguments, configures and listens; exits on --help and on a refusal. */
export async function serveCli<F extends string, T extends { fetch: FetchHandler }>(
  cli: ServeCli<F, T>,
): Promise<Serving<T>> {
  const own = Object.fromEntries(cli.flags.map((flag) => [flag, { type: "string" as const }]));
  const { values } = parseArgs({
    ...(cli.args ? { args: cli.args } : {}),
    options: {
      ...own,
      port: { type: "string", default: "0" },
      host: { type: "string", default: "127.0.0.1" },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help === true) {
    console.log(cli.usage);
    process.exit(0);
  }
  const port = String(values.port);
  const host = String(values.host);
  let served: T;
  try {
    if (!/^\d+$/.test(port)) throw new ConfigError("--port must be a number");
    served = await cli.configure(values as { [K in F]?: string });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`${cli.script}: ${error.message}\n\n${cli.usage}`);
    process.exit(2);
  }
  const listening = await listen(served.fetch, host, Number(port));
  return { served, listening, base: `http://${host}:${listening.port}` };
}
