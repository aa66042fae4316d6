/**
 * A V8 CPU profile of one workerd worker, taken through workerd's inspector (the DevTools
 * protocol over a WebSocket, as a debugger would): the time the worker's isolate spent running,
 * which is what Workers bill as CPU time, apart from workerd's HTTP handling and Miniflare's own
 * workers in front of it.
 */
import { WebSocket } from "undici";
import type { CpuProfile } from "./cpu-profile.ts";

/**
 * The sampling interval. At 100 µs the profiler's own interruptions made the worker's time per
 * search larger than all of workerd's process CPU; at 1 ms a run of a few seconds still takes
 * thousands of samples.
 */
const SAMPLING_INTERVAL_US = 1000;

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

/**
 * Milliseconds a profile's samples spent running JavaScript or collecting garbage. workerd tells
 * the profiler only part of its waiting as idle; the rest shows as "(program)" together with
 * workerd's own C++ (HTTP, sockets). Both are left out, which leaves what the worker itself ran.
 */
export function busyMs(profile: CpuProfile): number {
  const outside = new Set(
    profile.nodes.filter((n) => NOT_THE_WORKER.has(n.callFrame.functionName)).map((n) => n.id),
  );
  let us = 0;
  profile.samples.forEach((id, i) => {
    if (!outside.has(id)) us += profile.timeDeltas[i + 1] ?? 0;
  });
  return us / 1000;
}

const NOT_THE_WORKER = new Set(["(idle)", "(program)", "(root)"]);
