/**
 * A TraceFetch 1.0 command provider as a SearchAdapter, run by the 1.0 rules: a fixed argv with no
 * shell, the bridge's environment, one JSON request on stdin then EOF, stdout capped, stderr
 * redacted and cut, and a child that outlives its timeout (or the caller) ended with SIGTERM, then
 * SIGKILL after a grace period.
 *
 * Output the protocol cannot accept (over the cap, not UTF-8, not JSON, not a valid v1 answer, or
 * another provider's identity) is thrown as UnusableOutput carrying stdout, so the HTTP bridge can
 * serve it as it is and let the gateway's strict checks classify it.
 */
import { type ChildProcess, spawn } from "node:child_process";
import {
  checkProviderAnswer,
  commandFailure,
  concatBytes,
  decodeUtf8,
  PROVIDER_REQUEST_VERSION,
  ProviderError,
  redact,
  type SearchAdapter,
  type SearchAnswer,
} from "../../src/kit/mod.ts";
import { MAX_PROVIDER_BODY_BYTES } from "../../src/protocol/limits.ts";
import type { CommandProvider } from "./command-manifest.ts";

/** TraceFetch 1.0's wait between SIGTERM and SIGKILL: time to clean up, not to keep working. */
export const KILL_GRACE_MS = 2_000;

/**
 * Stderr kept per run. Only 320 characters are shown, but redaction must see secrets whole, and
 * a chatty child must not cost memory.
 */
export const MAX_STDERR_BYTES = 65_536;

/**
 * Children whose 'exit' event has fired. Deno sets `signalCode` when a signal is sent rather than
 * when it lands, so only the event says a child is really gone.
 */
const exited = new WeakSet<ChildProcess>();

/** Stdout the protocol refuses; `stdout` is what the child wrote, at most one byte past the cap. */
export class UnusableOutput extends ProviderError {
  override name = "UnusableOutput";
  constructor(message: string, readonly stdout: Uint8Array) {
    // Not retryable, as a protocol error is not: the same request gets the same answer.
    super("search_failed", message, { retryable: false });
  }
}

export type CommandAdapterOptions = {
  /** SIGTERM to SIGKILL; tests may shorten it. */
  graceMs?: number;
  /** Children still running, so the bridge can end them when it stops. */
  live?: Set<ChildProcess>;
};

export function commandAdapter(
  provider: CommandProvider,
  options: CommandAdapterOptions = {},
): SearchAdapter {
  const graceMs = options.graceMs ?? KILL_GRACE_MS;
  return {
    name: provider.name,
    scope: provider.scope,
    search: (request, signal) => run(provider, request, signal, graceMs, options.live),
  };
}

function run(
  provider: CommandProvider,
  request: { query: string; limit: number },
  signal: AbortSignal,
  graceMs: number,
  live: Set<ChildProcess> | undefined,
): Promise<SearchAnswer> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    let child: ChildProcess;
    try {
      child = spawn(provider.executable, provider.args, {
        shell: false,
        env: process.env,
        stdio: ["pipe", "pipe", "pipe"],
      });
    } catch (error) {
      return reject(commandFailure({ spawnError: error, command: shown(provider) }));
    }
    live?.add(child);
    child.once("exit", () => {
      exited.add(child);
      live?.delete(child);
    });

    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      outcome();
    };
    const timer = setTimeout(() => {
      terminate(child, graceMs);
      const seconds = provider.timeoutMs / 1_000;
      settle(() =>
        reject(
          new ProviderError(
            "search_failed",
            `no answer within ${seconds} s (timeout_seconds); the command was ended`,
          ),
        )
      );
    }, provider.timeoutMs);
    const onAbort = () => {
      terminate(child, graceMs);
      settle(() => reject(signal.reason));
    };
    signal.addEventListener("abort", onAbort, { once: true });

    const stdout: Uint8Array[] = [];
    let stdoutBytes = 0;
    child.stdout!.on("data", (chunk: Uint8Array) => {
      if (settled) return;
      stdout.push(chunk);
      stdoutBytes += chunk.byteLength;
      if (stdoutBytes <= MAX_PROVIDER_BODY_BYTES) return;
      terminate(child, graceMs);
      child.stdout!.destroy();
      const past = concatBytes(stdout).subarray(0, MAX_PROVIDER_BODY_BYTES + 1);
      settle(() =>
        reject(
          new UnusableOutput(
            `the command wrote more than ${MAX_PROVIDER_BODY_BYTES} bytes to stdout and was ended`,
            past,
          ),
        )
      );
    });
    const stderr: Uint8Array[] = [];
    let stderrBytes = 0;
    child.stderr!.on("data", (chunk: Uint8Array) => {
      const room = MAX_STDERR_BYTES - stderrBytes;
      if (room <= 0) return;
      const kept = chunk.subarray(0, room);
      stderr.push(kept);
      stderrBytes += kept.byteLength;
    });

    child.once("error", (error) => {
      // A child that never started has no pid and may never emit 'exit': it is gone already.
      if (child.pid === undefined) {
        exited.add(child);
        live?.delete(child);
      }
      terminate(child, graceMs);
      settle(() => reject(commandFailure({ spawnError: error, command: shown(provider) })));
    });
    child.once("close", (code: number | null, killedBy: NodeJS.Signals | null) => {
      settle(() => {
        if (code !== 0) {
          const said = redact(new TextDecoder().decode(concatBytes(stderr)));
          return reject(commandFailure({ exitCode: code, killedBy, stderr: said }));
        }
        try {
          resolve(answerFrom(provider, concatBytes(stdout)));
        } catch (error) {
          reject(error);
        }
      });
    });

    // A child that exits without reading stdin closes the pipe under us; its exit status speaks.
    child.stdin!.on("error", () => {});
    child.stdin!.end(
      JSON.stringify({
        schema_version: PROVIDER_REQUEST_VERSION,
        action: "search",
        query: request.query,
        limit: request.limit,
      }),
    );
  });
}

/** Stdout of a child that exited 0, checked exactly as the gateway checks an HTTP answer. */
function answerFrom(provider: CommandProvider, bytes: Uint8Array): SearchAnswer {
  const checked = checkProviderAnswer(decodeUtf8(bytes), provider);
  if (!checked.ok) throw new UnusableOutput(`the command's stdout: ${checked.message}`, bytes);
  return { candidates: checked.answer.candidates, warnings: checked.answer.warnings ?? [] };
}

export function hasExited(child: ChildProcess): boolean {
  return exited.has(child);
}

/**
 * SIGTERM now, SIGKILL after the grace period if the child is still there. process.kill rather
 * than child.kill: Deno's child.kill sends only the first signal it is asked for.
 */
export function terminate(child: ChildProcess, graceMs: number): void {
  const pid = child.pid;
  if (pid === undefined || exited.has(child)) return;
  send(pid, "SIGTERM");
  const kill = setTimeout(() => {
    if (!exited.has(child)) send(pid, "SIGKILL");
  }, graceMs);
  child.once("exit", () => clearTimeout(kill));
}

function send(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Gone between our check and the signal: what we wanted.
  }
}

/** The executable as the manifest wrote it: a resolved path would name this machine. */
function shown(provider: CommandProvider): string {
  return JSON.stringify(provider.command[0]);
}
