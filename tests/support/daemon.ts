/**
 * A server program the tests start from the system (Debian's redis-server, prometheus): found on
 * PATH or in /usr/bin, started on a loopback port, waited for until it says it is ready, and
 * stopped.
 *
 * Invariants:
 * - The server never outlives its test process: it runs under a shell that holds a pipe from us and
 *   stops it when the pipe closes, which the kernel does when we exit, however we exit.
 * - Its start and its stop are bounded: past them it is killed, and the caller learns so with its
 *   last output.
 */
import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { delimiter, join } from "node:path";

/** The last bytes of a server's output kept for a failure's message. */
const OUTPUT_KEPT = 4_000;

/** The path of `name`, on PATH or in /usr/bin (where Debian puts it); null when not installed. */
export function installedPath(name: string): string | null {
  for (const dir of [...(process.env.PATH ?? "").split(delimiter), "/usr/bin"]) {
    if (dir === "") continue;
    const path = join(dir, name);
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // Not in this directory: the next one may have it.
    }
  }
  return null;
}

export type Daemon = {
  /** Stops it (SIGTERM, then SIGKILL past `stopMs`): "late" when it had to be killed. */
  stop: () => Promise<"stopped" | "late">;
  /** Its last output, for a failure's message. */
  output: () => string;
};

/**
 * Starts `binary` with `args` and polls `ready` every `pollMs` until it holds; a server that exits
 * first, or is not ready within `startMs`, is stopped and the start fails with its output.
 */
export async function startDaemon(
  binary: string,
  args: string[],
  bounds: {
    what: string;
    ready: () => Promise<boolean>;
    startMs: number;
    stopMs: number;
    pollMs: number;
  },
): Promise<Daemon> {
  // The shell waits for the server and ends with it; beside it, a watcher reads the shell's stdin
  // (our pipe, kept as fd 3: a background job's own stdin is /dev/null) and stops the server when
  // the pipe closes: by stop(), or by the kernel when this process ends.
  const script =
    'exec 3<&0; "$0" "$@" & pid=$!; (cat <&3 >/dev/null; kill "$pid" 2>/dev/null) & wait "$pid"';
  const child = spawn("sh", ["-c", script, binary, ...args], { stdio: ["pipe", "pipe", "pipe"] });
  let output = "";
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-OUTPUT_KEPT));
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  child.stdin.on("error", () => {});
  let ended = false;
  const exited = new Promise<void>((resolve) => {
    const end = () => {
      ended = true;
      resolve();
    };
    child.once("exit", end);
    // No shell to run it: nothing started, so nothing to stop.
    child.once("error", end);
  });
  const stop = async (): Promise<"stopped" | "late"> => {
    child.stdin.end();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<"late">((resolve) => {
      timer = setTimeout(resolve, bounds.stopMs, "late");
    });
    const outcome = await Promise.race([exited.then(() => "stopped" as const), late]);
    clearTimeout(timer);
    child.stdout.destroy();
    child.stderr.destroy();
    if (outcome === "late") child.kill("SIGKILL");
    return outcome;
  };
  const deadline = performance.now() + bounds.startMs;
  while (!(await bounds.ready())) {
    if (ended || performance.now() > deadline) {
      await stop();
      throw new Error(`${bounds.what} did not become ready: ${output.trim()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, bounds.pollMs));
  }
  return { stop, output: () => output };
}

/** A port the kernel says is free now, on loopback. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
