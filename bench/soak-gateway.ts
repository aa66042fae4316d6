/**
 * The gateway under soak, started as `npm start` starts it (`node` with the start script's flags,
 * `--import tsx src/runtime/node.ts`, configured by environment variables) but by node directly, so the child's
 * pid is the gateway's own and /proc/<pid> describes it. Its stdout gives the URL it listens on; its
 * stderr is watched for the runtime's last-resort lines. It is killed on every exit path of the
 * soak process (process 'exit' runs on normal exits, on signals handled by installCleanup, and on
 * fatal errors).
 */
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { startFlags } from "./node-flags.ts";

export type GatewayExit = { code: number | null; signal: NodeJS.Signals | null; atMs: number };

export type SoakGateway = {
  pid: number;
  url: string;
  port: number;
  /** Lines of stderr that mean a fault: an escaped error or an internal error. */
  faultLines: string[];
  /** Every stderr line, up to a bound, and how many there were. */
  stderr: { lines: string[]; total: number };
  /** Set once the process has exited. */
  exited: () => GatewayExit | null;
  onExit: (listener: (exit: GatewayExit) => void) => void;
  /** SIGTERM (the gateway closes its server and exits 0), then SIGKILL after `graceMs`. */
  stop: (graceMs?: number) => Promise<GatewayExit>;
};

const ENTRY = fileURLToPath(new URL("../src/runtime/node.ts", import.meta.url));
const ROOT = fileURLToPath(new URL("..", import.meta.url));
const LISTENING = /listening on (http:\/\/[^\s]+)/;
/** The runtime's last-resort handler and the app's error handler write these. */
const FAULT = /escaped error|internal error/i;
const MAX_STDERR_LINES = 200;

export function startGateway(
  env: Record<string, string>,
  readyTimeoutMs = 60_000,
  /** Node flags added to the start script's (`--cpu-prof` for a profile written at exit). */
  extraFlags: readonly string[] = [],
): Promise<SoakGateway> {
  const started = performance.now();
  const flags = [...startFlags(), ...extraFlags, "--import", "tsx", ENTRY];
  const child = spawn(process.execPath, flags, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const killNow = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  };
  process.on("exit", killNow);

  let exit: GatewayExit | null = null;
  const listeners: Array<(exit: GatewayExit) => void> = [];
  const exitedPromise = new Promise<GatewayExit>((resolve) => {
    child.once("exit", (code, signal) => {
      exit = { code, signal, atMs: performance.now() - started };
      process.off("exit", killNow);
      for (const listener of listeners) listener(exit);
      resolve(exit);
    });
  });

  const faultLines: string[] = [];
  const stderr = { lines: [] as string[], total: 0 };
  let pendingErr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => {
    const lines = (pendingErr + chunk).split("\n");
    pendingErr = lines.pop() ?? "";
    for (const line of lines) {
      stderr.total++;
      if (stderr.lines.length < MAX_STDERR_LINES) stderr.lines.push(line);
      if (FAULT.test(line)) faultLines.push(line);
    }
  });

  return new Promise((resolve, reject) => {
    let pendingOut = "";
    const timer = setTimeout(() => {
      killNow();
      reject(new Error(`the gateway did not print its URL within ${readyTimeoutMs} ms`));
    }, readyTimeoutMs);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(
        new Error(
          `the gateway exited before listening (${signal ?? code}): ${
            stderr.lines.join("\n").slice(0, 2_000)
          }`,
        ),
      );
    });
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      pendingOut += chunk;
      const match = LISTENING.exec(pendingOut);
      if (match === null) return;
      clearTimeout(timer);
      // Keep reading stdout so the gateway never blocks on a full pipe.
      pendingOut = "";
      const url = (match[1] as string).replace(/\/$/, "");
      resolve({
        pid: child.pid as number,
        url,
        port: Number(new URL(url).port),
        faultLines,
        stderr,
        exited: () => exit,
        onExit: (listener) => listeners.push(listener),
        stop: async (graceMs = 5_000) => {
          if (exit !== null) return exit;
          child.kill("SIGTERM");
          const timer = setTimeout(killNow, graceMs);
          const done = await exitedPromise;
          clearTimeout(timer);
          return done;
        },
      });
    });
  });
}

/** What /proc says about a process's descriptors, with its TCP sockets sorted by peer. */
export type Descriptors = {
  fds: number;
  sockets: number;
  tcp: {
    listening: number;
    /** Connections accepted on the gateway's port (from clients). */
    fromClients: number;
    /** Connections the gateway opened to one of the given ports (providers). */
    toProviders: number;
    other: number;
  };
};

/** Reads /proc/<pid>/fd and /proc/<pid>/net/tcp{,6} (Linux). */
export function descriptors(pid: number, ownPort: number, providerPorts: number[]): Descriptors {
  const inodes = new Set<string>();
  let fds = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    let link: string;
    try {
      link = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue; // closed between the listing and the read
    }
    fds++;
    const socket = /^socket:\[(\d+)\]$/.exec(link);
    if (socket) inodes.add(socket[1] as string);
  }
  const tcp = { listening: 0, fromClients: 0, toProviders: 0, other: 0 };
  const providers = new Set(providerPorts);
  for (const table of ["tcp", "tcp6"]) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, "utf8");
    } catch {
      continue;
    }
    for (const row of text.split("\n").slice(1)) {
      const cols = row.trim().split(/\s+/);
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      if (cols.length < 10 || !inodes.has(cols[9] as string)) continue;
      const localPort = parseInt((cols[1] as string).split(":")[1] as string, 16);
      const remotePort = parseInt((cols[2] as string).split(":")[1] as string, 16);
      if (cols[3] === "0A") tcp.listening++;
      else if (localPort === ownPort) tcp.fromClients++;
      else if (providers.has(remotePort)) tcp.toProviders++;
      else tcp.other++;
    }
  }
  return { fds, sockets: inodes.size, tcp };
}
