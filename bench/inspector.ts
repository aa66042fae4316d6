/**
 * A V8 CPU profile of one workerd worker, taken through workerd's inspector (the DevTools
 * protocol over a WebSocket, as a debugger would): the time the worker's isolate spent running,
 * which is what Workers bill as CPU time, apart from workerd's HTTP handling and Miniflare's own
 * workers in front of it.
 */
import { WebSocket } from "undici";
import type { CpuProfile } from "./profile.ts";

/** The sampling interval: fine enough for searches of a few milliseconds. */
const SAMPLING_INTERVAL_US = 100;

export class InspectorProfiler {
  #socket: WebSocket | null = null;
  #nextId = 1;
  readonly #pending = new Map<number, (result: unknown) => void>();

  /** `url`: the worker's webSocketDebuggerUrl (workerd names the user worker `core:user:`). */
  constructor(private readonly url: string) {}

  async start(): Promise<void> {
    const socket = new WebSocket(this.url);
    this.#socket = socket;
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener("open", () => resolve(), { once: true });
      socket.addEventListener("error", () => reject(new Error(`no inspector at ${this.url}`)), {
        once: true,
      });
    });
    socket.addEventListener("message", (event) => {
      const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown };
      if (message.id !== undefined) this.#pending.get(message.id)?.(message.result);
    });
    await this.#send("Profiler.enable");
    await this.#send("Profiler.setSamplingInterval", { interval: SAMPLING_INTERVAL_US });
    await this.#send("Profiler.start");
  }

  async stop(): Promise<CpuProfile> {
    const { profile } = (await this.#send("Profiler.stop")) as { profile: CpuProfile };
    this.#socket?.close();
    this.#socket = null;
    return profile;
  }

  #send(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
    const id = this.#nextId++;
    return new Promise((resolve) => {
      this.#pending.set(id, (result) => {
        this.#pending.delete(id);
        resolve(result);
      });
      this.#socket?.send(JSON.stringify({ id, method, params }));
    });
  }
}

/** Milliseconds a profile's samples spent not idle. */
export function busyMs(profile: CpuProfile): number {
  const idle = new Set(
    profile.nodes.filter((n) => n.callFrame.functionName === "(idle)").map((n) => n.id),
  );
  let us = 0;
  profile.samples.forEach((id, i) => {
    if (!idle.has(id)) us += profile.timeDeltas[i + 1] ?? 0;
  });
  return us / 1000;
}
