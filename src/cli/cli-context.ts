/**
 * What a command needs from the process, passed in so commands never reach for globals: the
 * environment (the gateway's settings parsed only on request), the three streams, whether each is
 * a terminal, fetch, and a way to ask a person.
 */
import type { Envelope } from "../protocol/envelope-schema.ts";
import type { Env } from "../config/env-values.ts";
import type { ReadSettings } from "../config/settings.ts";
import type { Paint } from "./paint.ts";

export type CliContext = {
  /** The CLI's own variables (the token's variable, NO_COLOR, where the connection is saved). */
  env: Record<string, string | undefined>;
  /**
   * The gateway's settings, parsed from this process's environment, for a command that runs the
   * core in process or checks a configuration as a gateway would; `overrides` replace variables
   * (serve's --host, --port and --manifest). Throws ConfigError naming a refused variable. A
   * command that only calls a gateway never asks, so no unrelated variable can fail it.
   */
  settings: (overrides?: Env) => ReadSettings;
  /** Machine mode (`--json`): exactly one envelope on stdout, never a question. */
  machine: boolean;
  /** The id of this invocation; the gateway's own id replaces it when the gateway answers. */
  requestId: string;
  /** Reads all of stdin as a byte stream (for `search -`). */
  stdin: () => ReadableStream<Uint8Array>;
  /** Progress and questions go to stderr, so stdout holds only the answer. */
  writeStderr: (text: string) => void;
  stdinIsTTY: boolean;
  stderrIsTTY: boolean;
  /** Colours for stderr (progress and problems); stdout's are chosen when the reply is printed. */
  stderrPaint: Paint;
  fetch: typeof fetch;
  /** Asks a person a yes/no question on the terminal; only called when one can answer. */
  confirm: (question: string) => Promise<boolean>;
  /**
   * A signal that fires on Ctrl-C or SIGTERM, for commands that must clean up (serve, an
   * in-process search). Asking for it replaces the default of dying at once.
   */
  interrupted: () => AbortSignal;
  /** For `serve`'s "listening" line and `crawl`'s line per page, printed as they happen. */
  writeStdout: (text: string) => void;
};

/**
 * What a command hands back. An envelope is printed as JSON in machine mode and rendered for
 * people otherwise; a document (a JSON Schema, help, a transcript) is printed as it is.
 */
export type Reply =
  | { kind: "envelope"; envelope: Envelope; render?: (paint: Paint) => string }
  | { kind: "document"; stdout: string; stderr?: string; exitCode: 0 | 1 | 2 | 3 | 4 };
