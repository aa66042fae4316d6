/**
 * What every envelope command's arguments share: strict parsing with `--json` and `--help` beside
 * the command's own options. A refused option is a usage envelope and `--help` is the command's
 * help document; either is the command's whole reply.
 */
import { parseArgs, type ParseArgsConfig } from "node:util";
import type { Command } from "../protocol/codes.ts";
import type { CliContext, Reply } from "./cli-context.ts";
import { HELP } from "./help-text.ts";
import { tryParseArgs } from "./try-parse-args.ts";
import { problemReply, requestProblemReply } from "./usage-reply.ts";

type Options = NonNullable<ParseArgsConfig["options"]>;

const COMMON = { json: { type: "boolean" }, help: { type: "boolean", short: "h" } } as const;

type Parsed<O extends Options> = ReturnType<
  typeof parseArgs<
    { args: string[]; strict: true; allowPositionals: true; options: typeof COMMON & O }
  >
>;

export type CommandArgs<O extends Options> =
  | { ok: true; values: Parsed<O>["values"]; positionals: string[] }
  | { ok: false; reply: Reply };

/** A command that takes exactly one positional argument: the refusal of any other count. */
export type OnePositional = {
  /** The refusal's message, given how many arguments came. */
  message: (count: number) => string;
  field?: string;
};

/**
 * `name` is the command as typed (its help topic, and what a refusal points to); `command` the
 * envelope's. Without `positionals`, any positional argument is refused; with `one`, any count but
 * one is refused `invalid_field`.
 */
export function parseCommandArgs<O extends Options>(
  name: string,
  command: Command,
  args: string[],
  ctx: Pick<CliContext, "requestId">,
  options: O,
  { positionals = true, one }: { positionals?: boolean; one?: OnePositional } = {},
): CommandArgs<O> {
  const argv = tryParseArgs(name, () =>
    parseArgs({
      args,
      strict: true,
      allowPositionals: positionals,
      options: { ...COMMON, ...options },
    }));
  if (!argv.ok) {
    return { ok: false, reply: requestProblemReply(command, argv.problem, ctx.requestId) };
  }
  const { values, positionals: given } = argv.parsed;
  if ((values as { help?: boolean }).help) {
    return { ok: false, reply: { kind: "document", stdout: HELP[name] ?? "", exitCode: 0 } };
  }
  if (one !== undefined && given.length !== 1) {
    const message = one.message(given.length);
    return {
      ok: false,
      reply: problemReply(command, "invalid_field", ctx.requestId, message, one.field),
    };
  }
  return { ok: true, values: values as Parsed<O>["values"], positionals: given };
}
