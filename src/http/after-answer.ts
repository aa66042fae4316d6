/**
 * Work a route leaves for after its answer, such as recording a search's trace.
 */
import type { Context } from "hono";
import type { GatewayEnv } from "./caller-middleware.ts";

type WaitUntil = (promise: Promise<unknown>) => void;

/**
 * Runs work after the answer: on a later turn, so the handler has returned its response first, and
 * inside `waitUntil` where the runtime has one (Workers), which keeps the isolate for it. The
 * execution context is looked up with the first work handed over, not per request: Hono's getter
 * throws where there is none (Node, Deno), and most searches leave no work.
 */
export function afterAnswer(c: Context<GatewayEnv>): (work: () => Promise<void>) => void {
  let waitUntil: WaitUntil | null | undefined;
  return (work) => {
    waitUntil ??= contextWaitUntil(c);
    const done = new Promise((resolve) => setTimeout(resolve, 0)).then(work).catch(() => {});
    waitUntil?.(done);
  };
}

function contextWaitUntil(c: Context<GatewayEnv>): WaitUntil | null {
  try {
    const context = c.executionCtx;
    return (promise) => context.waitUntil(promise);
  } catch {
    // Node, Deno and app.request have no execution context: the turn after the answer is enough.
    return null;
  }
}
