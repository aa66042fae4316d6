/**
 * How the runtime running a test serves a gateway: on Deno what src/runtime/deno.ts listens with
 * (Deno.serve, which hands the handler its ServeInfo), on Node src/runtime/node-listen.ts; so one
 * test file covers each runtime's listener when each runs it.
 */
import type { Listen } from "../../src/runtime/launch.ts";
import { listen as nodeListen } from "../../src/runtime/node-listen.ts";

export const isDeno = "Deno" in globalThis;

const denoListen: Listen = (fetch, hostname, port) =>
  new Promise((resolve) => {
    // deno-lint-ignore no-explicit-any
    const server = (globalThis as any).Deno.serve({
      hostname,
      port,
      onListen: (addr: { port: number }) =>
        resolve({ port: addr.port, close: () => server.shutdown() }),
    }, fetch);
  });

/** The listener of the runtime running this test. */
export const runtimeListen: Listen = isDeno ? denoListen : nodeListen;
