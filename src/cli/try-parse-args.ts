/**
 * node:util parseArgs, with its thrown errors turned into the usage codes of docs/envelope.md: an
 * option the command does not know is `unknown_field`, a malformed one `invalid_field`.
 */
import type { RequestProblem } from "../protocol/search-request.ts";

export type ArgsResult<T> = { ok: true; parsed: T } | { ok: false; problem: RequestProblem };

export function tryParseArgs<T>(command: string, parse: () => T): ArgsResult<T> {
  try {
    return { ok: true, parsed: parse() };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const message = error instanceof Error ? error.message : String(error);
    const option = /'(-[^' ]+)/.exec(message)?.[1] ?? "";
    const help = `see tracefetch ${command} --help`;
    if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
      return {
        ok: false,
        problem: {
          code: "unknown_field",
          field: option,
          message: `unknown option ${option}; ${help}`,
        },
      };
    }
    if (
      code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" ||
      code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL"
    ) {
      return {
        ok: false,
        problem: { code: "invalid_field", field: option, message: `${message}; ${help}` },
      };
    }
    throw error;
  }
}
