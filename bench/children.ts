/**
 * Spawns every process of a run (`node --import tsx <file>` with an IPC channel), waits for each to
 * report ready, and guarantees that all of them are killed when the harness exits, by any path.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { IpcReady, IpcReply, IpcRequest } from "./child-ipc.ts";

export type Child<Info> = {
  name: string;
  pid: number;
  info: Info;
  request: (op: string, arg?: unknown) => Promise<unknown>;
  /** Asks the child to exit cleanly (profiles get written), then kills it if it has not. */
  stop: () => Promise<void>;
  /** SIGKILL, resolved once the child has exited (and was reaped). */
  kill: () => Promise<void>;
};

export type ChildOptions = {
  env?: Record<string, string>;
  /** Node flags placed before `--import tsx`, such as --expose-gc or --cpu-prof. */
  execArgv?: string[];
  readyTimeoutMs?: number;
};

/**
 * A Node child loads its TypeScript through tsx, which takes seconds on a busy 2-core machine, and
 * scenario 4 starts seven processes at once.
 */
const READY_TIMEOUT_MS = 60_000;

const live = new Set<ChildProcess>();
/** Processes a child started itself (workerd under Miniflare), by id, with their command name. */
const grandchildren = new Map<number, string>();

const running = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;

/** Synchronous, for process 'exit': every child still running gets SIGKILL. */
export function killAll(): void {
  for (const child of live) if (running(child)) child.kill("SIGKILL");
  for (const [pid, comm] of grandchildren) {
    try {
      // Only while the id still names that program: an id is reused once its process is reaped.
      if (readFileSync(`/proc/${pid}/comm`, "utf8").trim() === comm) process.kill(pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
  grandchildren.clear();
}

/** A process a child reported starting: killed with the children if it outlives its parent. */
export function adoptPid(pid: number): void {
  try {
    grandchildren.set(pid, readFileSync(`/proc/${pid}/comm`, "utf8").trim());
  } catch {
    // Already gone.
  }
}

/** SIGKILL to every child, then waits (at most 2 s) until they have exited. */
export async function killAllAndWait(): Promise<void> {
  const waits = [...live].filter(running).map((child) =>
    new Promise<void>((resolve) => child.once("exit", () => resolve()))
  );
  killAll();
  await Promise.race([Promise.all(waits), new Promise((r) => setTimeout(r, 2_000))]);
}

let installed = false;
/** Kills every child on exit, Ctrl-C, termination, or an error nobody caught. */
export function installCleanup(): void {
  if (installed) return;
  installed = true;
  process.on("exit", killAll);
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.on(signal, () => {
      killAll();
      process.exit(130);
    });
  }
  const fatal = (error: unknown) => {
    console.error("bench: fatal:", error);
    void killAllAndWait().finally(() => process.exit(1));
  };
  process.on("uncaughtException", fatal);
  process.on("unhandledRejection", fatal);
}

export function startChild<Info>(
  name: string,
  file: string,
  options: ChildOptions = {},
): Promise<Child<Info>> {
  const script = fileURLToPath(new URL(file, import.meta.url));
  const child = spawn(
    process.execPath,
    [...(options.execArgv ?? []), "--import", "tsx", script],
    {
      stdio: ["ignore", "inherit", "inherit", "ipc"],
      env: { ...process.env, ...options.env },
    },
  );
  let nextId = 1;
  const pending = new Map<number, (reply: IpcReply) => void>();
  child.on("message", (m: IpcReply) => {
    if (m?.type === "reply") pending.get(m.id)?.(m);
  });
  const request = (op: string, arg?: unknown) =>
    new Promise<unknown>((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`${name}: no reply to ${op}`));
      }, 10_000);
      pending.set(id, (reply) => {
        clearTimeout(timer);
        pending.delete(id);
        if (reply.ok) resolve(reply.value);
        else reject(new Error(`${name}: ${op} failed: ${reply.error}`));
      });
      child.send({ type: "request", id, op, arg } satisfies IpcRequest);
    });
  return supervise<Info>(name, child, options, {
    request,
    leave: () => request("exit").catch(() => {}),
    onReady: (ready) =>
      child.on("message", (m: IpcReady) => {
        if (m?.type === "ready") ready(m.info as Info);
      }),
  });
}

/**
 * Spawns a program that is not a Node child (Deno), which reports ready with one JSON line
 * `{"type":"ready","info":...}` on stdout and exits when its stdin closes, so it never outlives
 * the harness. It has no IPC channel: `request` refuses every op.
 */
export function startCommand<Info>(
  name: string,
  command: string,
  args: string[],
  options: ChildOptions = {},
): Promise<Child<Info>> {
  const child = spawn(command, args, {
    stdio: ["pipe", "pipe", "inherit"],
    env: { ...process.env, ...options.env },
  });
  return supervise<Info>(name, child, options, {
    request: (op: string) => Promise.reject(new Error(`${name}: no IPC for ${op}`)),
    leave: () => child.stdin?.end(),
    onReady: (ready) => {
      let pending = "";
      child.stdout?.setEncoding("utf8");
      child.stdout?.on("data", (chunk: string) => {
        pending += chunk;
        const lines = pending.split("\n");
        pending = lines.pop() ?? "";
        for (const line of lines) {
          let message: IpcReady | null = null;
          try {
            message = JSON.parse(line) as IpcReady;
          } catch {
            // Not the ready line: the program's own output.
          }
          if (message?.type === "ready") ready(message.info as Info);
          else if (line !== "") console.error(`${name}: ${line}`);
        }
      });
    },
  });
}

/**
 * What every child shares: it is killed with the harness, asked to leave by `stop` (and killed
 * 5 s later if it has not), and must report ready within its timeout or it is killed.
 */
function supervise<Info>(
  name: string,
  child: ChildProcess,
  options: ChildOptions,
  how: {
    request: Child<Info>["request"];
    /** Asks the child to exit by itself. */
    leave: () => unknown;
    /** Calls `ready` with the child's info once it reports ready. */
    onReady: (ready: (info: Info) => void) => void;
  },
): Promise<Child<Info>> {
  live.add(child);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  void exited.then(() => live.delete(child));
  const kill = async () => {
    if (running(child)) child.kill("SIGKILL");
    await exited;
  };
  const stop = async () => {
    if (!running(child)) return;
    await how.leave();
    const timer = setTimeout(() => void kill(), 5_000);
    await exited;
    clearTimeout(timer);
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void kill();
      reject(new Error(`${name} did not report ready`));
    }, options.readyTimeoutMs ?? READY_TIMEOUT_MS);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited before it was ready (${signal ?? code})`));
    });
    how.onReady((info) => {
      clearTimeout(timer);
      resolve({ name, pid: child.pid as number, info, request: how.request, stop, kill });
    });
  });
}
