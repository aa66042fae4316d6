/**
 * CLI: `tracefetch`, for agents and people. Each command turns its arguments into a reply (an
 * envelope, or a raw document), and this file prints it: as one JSON object in machine mode,
 * rendered for people otherwise.
 *
 * Boundary: the CLI sits on top of every layer and owns only the terminal: arguments, the saved
 * connection, printing and exit codes; searching, validation and the code table live below it.
 *
 * Invariants:
 * - Machine mode (`--json`) prints exactly one envelope on stdout, whatever happened (faults
 *   included), and exits with its exit_code; `schema`, `serve` and `--help` print documents.
 * - Every header comes from CODES via buildEnvelope; the CLI has no table of its own.
 * - A request is validated as the gateway would before anything is sent.
 * - The token never crosses plain http to a host that is not loopback, and is never saved.
 * - Progress, questions and problems go to stderr; colour only on a terminal and never with
 *   NO_COLOR.
 */
import { parseCidr } from "../io/ip-rules.ts";
import { Readable } from "node:stream";
import { pathToFileURL } from "node:url";
import { createInterface } from "node:readline/promises";
import type { Command } from "../protocol/codes.ts";
import type { Envelope } from "../protocol/envelope-schema.ts";
import { readSettings } from "../config/settings.ts";
import type { CliContext, Reply } from "./cli-context.ts";
import { HELP, OVERVIEW } from "./help-text.ts";
import { forPeople } from "./for-people.ts";
import { type Paint, paintFor } from "./paint.ts";
import { problemReply } from "./usage-reply.ts";

type Run = (args: string[], ctx: CliContext) => Promise<Reply>;

/** Commands load on demand, so `schema` or `validate` never pay for the HTTP stack. */
const COMMANDS: Record<string, { command: Command; load: () => Promise<Run> }> = {
  search: {
    command: "search",
    load: async () => (await import("./search-command.ts")).searchCommand,
  },
  status: {
    command: "status",
    load: async () => (await import("./status-command.ts")).statusCommand,
  },
  doctor: {
    command: "doctor",
    load: async () => (await import("./doctor-command.ts")).doctorCommand,
  },
  expand: {
    command: "expand",
    load: async () => (await import("./expand-command.ts")).expandCommand,
  },
  fetch: {
    command: "fetch",
    load: async () => (await import("./fetch-command.ts")).fetchCommand,
  },
  crawl: {
    command: "crawl",
    load: async () => (await import("./crawl-command.ts")).crawlCommand,
  },
  verify: {
    command: "verify",
    load: async () => (await import("./verify-command.ts")).verifyCommand,
  },
  connect: {
    command: "connect",
    load: async () => (await import("./connect-command.ts")).connectCommand,
  },
  schema: {
    command: "schema",
    load: async () => (await import("./schema-command.ts")).schemaCommand,
  },
  validate: {
    command: "validate",
    load: async () => (await import("./validate-command.ts")).validateCommand,
  },
  conformance: {
    command: "conformance",
    load: async () => (await import("./conformance-command.ts")).conformanceCommand,
  },
  replay: {
    command: "replay",
    load: async () => (await import("./replay-command.ts")).replayCommand,
  },
  serve: {
    command: "unknown",
    load: async () => (await import("./serve-command.ts")).serveCommand,
  },
  mcp: {
    command: "unknown",
    load: async () => (await import("./mcp-command.ts")).mcpCommand,
  },
};

export async function main(argv: string[]): Promise<number> {
  const { global, name, rest: after } = splitGlobalOptions(argv);
  // The global options go first among the command's own, before any `--`.
  const rest = [...global, ...after];
  const end = rest.indexOf("--");
  const jsonAt = rest.indexOf("--json");
  const machine = jsonAt !== -1 && (end === -1 || jsonAt < end);
  const ctx = processContext(machine);
  const stdoutPaint = paintFor(process.stdout.isTTY === true, ctx.env);

  if (name === "--help" || name === "-h" || name === "help") {
    const topic = HELP[after[0] ?? ""] ?? OVERVIEW;
    return await print(
      { kind: "document", stdout: topic, exitCode: 0 },
      ctx,
      stdoutPaint,
      "unknown",
    );
  }
  if (name === "--version") {
    const pkg = await import("../../package.json", { with: { type: "json" } });
    return await print(
      { kind: "document", stdout: `${pkg.default.version}\n`, exitCode: 0 },
      ctx,
      stdoutPaint,
      "unknown",
    );
  }
  const entry = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (entry === undefined) {
    if (!machine && name === "") {
      return await print(
        { kind: "document", stdout: "", stderr: OVERVIEW, exitCode: 2 },
        ctx,
        stdoutPaint,
        "unknown",
      );
    }
    const reply = name === ""
      ? problemReply(
        "unknown",
        "not_found",
        ctx.requestId,
        "no command given; try tracefetch --help",
      )
      : name.startsWith("-")
      ? problemReply(
        "unknown",
        "unknown_field",
        ctx.requestId,
        `${name} goes after the command (tracefetch <command> ${name} ...); only ` +
          `${GLOBAL_OPTIONS.join(" and ")} may come before it`,
        name,
      )
      : problemReply(
        "unknown",
        "not_found",
        ctx.requestId,
        `there is no command "${name}"; try tracefetch --help`,
      );
    return await print(reply, ctx, stdoutPaint, "");
  }
  let reply: Reply;
  try {
    reply = await (await entry.load())(rest, ctx);
  } catch (error) {
    // A fault is still one envelope: the agent reads `report`, a person gets the stack on stderr.
    if (!machine) ctx.writeStderr(`${(error as Error)?.stack ?? String(error)}\n`);
    reply = problemReply(
      entry.command,
      "internal_error",
      ctx.requestId,
      `the CLI hit an internal fault (${(error as Error)?.name ?? "error"}); report the request_id`,
    );
  }
  return await print(reply, ctx, stdoutPaint, name);
}

/** Options that may come before the command too: `tracefetch --json status`. */
const GLOBAL_OPTIONS = ["--json", "--gateway"] as const;

/**
 * The command's name, with any global options found before it (`--gateway` with its value) kept
 * apart so they can be handed to the command like its own. The first other argument is the name
 * (`--help`, `--version`, or an option that belongs after the command, which is refused).
 */
function splitGlobalOptions(argv: string[]): { global: string[]; name: string; rest: string[] } {
  const global: string[] = [];
  let i = 0;
  while (i < argv.length) {
    const arg = argv[i] as string;
    if (arg === "--json" || arg.startsWith("--gateway=")) {
      global.push(arg);
      i += 1;
    } else if (arg === "--gateway") {
      // Without a value the command's own parsing refuses it, naming the option.
      global.push(...argv.slice(i, i + 2));
      i += 2;
    } else {
      break;
    }
  }
  const [name = "", ...rest] = argv.slice(i);
  return { global, name, rest };
}

async function print(reply: Reply, ctx: CliContext, paint: Paint, name: string): Promise<number> {
  switch (reply.kind) {
    case "document":
      if (reply.stderr) ctx.writeStderr(reply.stderr);
      await writeOut(reply.stdout);
      return reply.exitCode;
    case "envelope": {
      const { envelope } = reply;
      if (ctx.machine) {
        await writeOut(`${JSON.stringify(envelope)}\n`);
      } else {
        await writeOut(reply.render ? reply.render(paint) : "");
        if (!envelope.ok) ctx.writeStderr(`${problemLine(envelope, name, ctx.stderrPaint)}\n`);
      }
      return envelope.exit_code;
    }
    default: {
      const never: never = reply;
      throw new Error(`unhandled reply ${JSON.stringify(never)}`);
    }
  }
}

/** One line for a person: what went wrong, its code, and what to do next. */
export function problemLine(envelope: Envelope, name: string, paint: Paint): string {
  const wait = envelope.retry_after_ms === undefined
    ? ""
    : `, after ${Math.ceil(envelope.retry_after_ms / 1000)} s`;
  const message = envelope.error ? forPeople(envelope.error.message, envelope) : envelope.code;
  return `${paint.red(`tracefetch ${name || "error"}:`)} ${message} ` +
    paint.dim(`(${envelope.code}; next: ${envelope.action}${wait})`);
}

function writeOut(text: string): Promise<void> {
  if (text === "") return Promise.resolve();
  return new Promise((resolve, reject) => {
    process.stdout.write(text, (error) => (error ? reject(error) : resolve()));
  });
}

function processContext(machine: boolean): CliContext {
  const env = process.env;
  let interrupted: AbortController | null = null;
  return {
    env,
    // The one place the CLI parses the gateway's settings, for the commands that ask.
    settings: (overrides = {}) => readSettings({ ...env, ...overrides }, { parseCidr }),
    machine,
    requestId: crypto.randomUUID(),
    stdin: () => Readable.toWeb(process.stdin) as unknown as ReadableStream<Uint8Array>,
    writeStderr: (text) => void process.stderr.write(text),
    writeStdout: (text) => void process.stdout.write(text),
    stdinIsTTY: process.stdin.isTTY === true,
    stderrIsTTY: process.stderr.isTTY === true,
    stderrPaint: paintFor(process.stderr.isTTY === true, env),
    fetch: (input, init) => fetch(input, init),
    confirm: async (question) => {
      const rl = createInterface({ input: process.stdin, output: process.stderr });
      try {
        return /^y(es)?$/i.test((await rl.question(`${question} [y/N] `)).trim());
      } catch (error) {
        // Ctrl-D or Ctrl-C at the question is a no, not a fault; end the question's line.
        if ((error as Error)?.name === "AbortError") {
          process.stderr.write("\n");
          return false;
        }
        throw error;
      } finally {
        rl.close();
      }
    },
    interrupted: () => {
      if (interrupted === null) {
        const controller = new AbortController();
        interrupted = controller;
        const stop = () => controller.abort();
        process.once("SIGINT", stop);
        process.once("SIGTERM", stop);
      }
      return interrupted.signal;
    },
  };
}

/** Used by bin/tracefetch.js on Node and by `deno run -A src/cli/main.ts`. */
export async function run(): Promise<never> {
  const code = await main(process.argv.slice(2));
  // Exit now: idle keep-alive sockets to the gateway or providers must not hold the process open.
  process.exit(code);
}

// Deno sets import.meta.main; on Node, compare with the script (bin/tracefetch.js calls run()).
if ((import.meta as { main?: boolean }).main ?? isEntry()) await run();

function isEntry(): boolean {
  const script = process.argv[1];
  return script !== undefined && import.meta.url === pathToFileURL(script).href;
}
