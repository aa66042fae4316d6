/**
 * Work a route leaves for after its answer, such as recording a search's trace.
 */
import type { Context } from "hono";
import type { GatewayEnv } from "./caller-middleware.ts";

/**
 * Runs work after the answer: on a later turn, so the handler has returned its response first, and
 * inside `waitUntil` where the runtime has one (Workers), which keeps the isolate for it.
 */
export function afterAnswer(c: Context<GatewayEnv>): (work: () => Promise<void>) => void {
  let waitUntil: ((promise: Promise<unknown>) => void) | null = null;
  try {
    const context = c.executionCtx;
    waitUntil = (promise) => context.waitUntil(promise);
  } catch {
    // Node, Deno and app.request have no execution context: the turn after the answer is enough.
  }
  return (work) => {
    const done = new Promise((resolve) => setTimeout(resolve, 0)).then(work).catch(() => {});
    waitUntil?.(done);
  };
}
