/**
 * Spawns every process of a run (`node --import tsx <file>` with an IPC channel), waits for each to
 * report ready, and guarantees that all of them are killed when the harness exits, by any path.
 */
import { type ChildProcess, spawn } from "node:child_process";
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

const live = new Set<ChildProcess>();

const running = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;

/** Synchronous, for process 'exit': every child still running gets SIGKILL. */
export function killAll(): void {
  for (const child of live) if (running(child)) child.kill("SIGKILL");
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
  live.add(child);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  void exited.then(() => live.delete(child));
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
  const kill = async () => {
    if (running(child)) child.kill("SIGKILL");
    await exited;
  };
  const stop = async () => {
    if (!running(child)) return;
    await request("exit").catch(() => {});
    const timer = setTimeout(() => void kill(), 5_000);
    await exited;
    clearTimeout(timer);
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void kill();
      reject(new Error(`${name} did not report ready`));
    }, options.readyTimeoutMs ?? 20_000);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited before it was ready (${signal ?? code})`));
    });
    child.on("message", (m: IpcReady) => {
      if (m?.type !== "ready") return;
      clearTimeout(timer);
      resolve({ name, pid: child.pid as number, info: m.info as Info, request, stop, kill });
    });
  });
}
