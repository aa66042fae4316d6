/**
 * The child's side of the harness's IPC channel: announce readiness with some info (a port, URLs),
 * answer numbered requests, and exit when the parent goes away so no child outlives a run.
 */

export type IpcRequest = { type: "request"; id: number; op: string; arg?: unknown };
export type IpcReply = { type: "reply"; id: number; ok: boolean; value?: unknown; error?: string };
export type IpcReady = { type: "ready"; info: unknown };

export type Handlers = Record<string, (arg: unknown) => unknown>;

/** Handlers every child has: `gc` (needs --expose-gc), `memory`, and `exit` (a clean exit writes --cpu-prof profiles). */
const common: Handlers = {
  gc: () => {
    const gc = (globalThis as { gc?: () => void }).gc;
    if (gc) gc();
    return gc !== undefined;
  },
  memory: () => process.memoryUsage(),
  exit: () => {
    setTimeout(() => process.exit(0), 10);
    return true;
  },
};

export function serveIpc(info: unknown, handlers: Handlers = {}): void {
  const send = process.send?.bind(process);
  if (send === undefined) {
    throw new Error("this file is a child of bench/run.ts and needs its IPC channel");
  }
  const all: Handlers = { ...common, ...handlers };
  process.on("message", (message: IpcRequest) => {
    if (message?.type !== "request") return;
    const handler = all[message.op];
    Promise.resolve()
      .then(() => {
        if (handler === undefined) throw new Error(`unknown op ${message.op}`);
        return handler(message.arg);
      })
      .then(
        (value) => send({ type: "reply", id: message.id, ok: true, value } satisfies IpcReply),
        (error: unknown) =>
          send(
            { type: "reply", id: message.id, ok: false, error: String(error) } satisfies IpcReply,
          ),
      );
  });
  // The parent died or closed the channel: never linger.
  process.on("disconnect", () => process.exit(0));
  process.on("SIGTERM", () => process.exit(0));
  process.on("SIGINT", () => process.exit(0));
  send({ type: "ready", info } satisfies IpcReady);
}

/** Reads a JSON environment variable the parent set, or fails loudly. */
export function envJson<T>(name: string): T {
  const raw = process.env[name];
  if (raw === undefined) throw new Error(`${name} is not set`);
  return JSON.parse(raw) as T;
}
