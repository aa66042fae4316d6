/**
 * One provider call of an expand or refresh, under the provider's `max_concurrency` gate (shared
 * with its searches) and its own timeout, which counts from the moment the call starts to wait.
 *
 * Invariants:
 * - The deadline is an AttemptAbort on a timer this module owns and clears, so the transport tells
 *   a timeout from a caller who went away; never an AbortSignal.timeout inside AbortSignal.any,
 *   which Node 20's garbage collector may take before it fires.
 * - A call that waited out its deadline in the queue, or that was granted a place too late to use
 *   it, never reached the provider: it is `no_place` (the caller is told `overloaded`), never a
 *   failure of the provider.
 * - A place is given back only once the exchange with the provider has ended: at once when the
 *   answer was read whole or the provider was never asked, and PLACE_HELD_AFTER_ABORT_MS after a
 *   call our own deadline or the caller's departure cut short, so that the provider sees that
 *   connection close before the next call the place lets through (the gate keeps the place; the
 *   answer does not wait). The exchange port does not say when an aborted exchange's connection
 *   has closed; this hold stands in for it.
 */
import { MIN_PLACE_TIME_SHARE, PLACE_HELD_AFTER_ABORT_MS } from "../protocol/admission-limits.ts";
import type { Gate, Release } from "../transport/provider-client.ts";
import { QueueWatch } from "../core/queue-watch.ts";
import { AttemptAbort } from "../transport/attempt-abort.ts";

/** How a placed call ended. */
export type Placed<T> =
  /** The provider was asked; `timedOut` when the deadline fired before the call returned. */
  | { kind: "called"; result: T; timedOut: boolean; queued: Queued }
  /** The provider was never asked: no place freed in time. */
  | { kind: "no_place"; queued: Queued; leftMs: number }
  /** The caller went away before the provider was asked. */
  | { kind: "caller_left" };

/** What the call spent in the gateway's own queue. */
export type Queued = { waited: boolean; ms: number };

export type PlacedCallInit<T> = {
  gate: Gate;
  /** The provider's timeout: the whole call, queue included, ends within it. */
  budgetMs: number;
  /** Fires when the caller goes away. */
  caller: AbortSignal;
  /** A monotonic clock, in milliseconds. */
  now: () => number;
  /** The call itself; it must end soon after `signal` fires. */
  act: (signal: AbortSignal) => Promise<T>;
  /** Whether a result is a complete answer, its body read whole (nothing left to tear down). */
  complete: (result: T) => boolean;
};

export async function placedCall<T>(init: PlacedCallInit<T>): Promise<Placed<T>> {
  const { budgetMs, caller, now } = init;
  const deadline = new AbortController();
  const { signal } = deadline;
  const timer = setTimeout(
    () => deadline.abort(new AttemptAbort("timeout", "provider_timeout")),
    budgetMs,
  );
  const onCallerGone = () => deadline.abort(new AttemptAbort("cancelled"));
  if (caller.aborted) onCallerGone();
  else caller.addEventListener("abort", onCallerGone, { once: true });
  const started = now();
  const gate = new QueueWatch(init.gate);
  const queued = () => ({ waited: gate.waited, ms: Math.max(0, now() - started) });
  try {
    let release: Release;
    try {
      release = await gate.acquire(signal);
    } catch (error) {
      if (!signal.aborted) throw error;
      return departed(signal)
        ? { kind: "caller_left" }
        : { kind: "no_place", queued: queued(), leftMs: 0 };
    }
    const waitedFor = queued();
    const leftMs = budgetMs - waitedFor.ms;
    if (waitedFor.waited && leftMs < budgetMs * MIN_PLACE_TIME_SHARE) {
      release();
      return { kind: "no_place", queued: waitedFor, leftMs: Math.max(0, leftMs) };
    }
    // Unless the call returns complete, the runtime may be tearing down its exchange right now.
    let cutShort = true;
    try {
      const result = await init.act(signal);
      cutShort = signal.aborted && !init.complete(result);
      return { kind: "called", result, timedOut: timedOut(signal), queued: waitedFor };
    } finally {
      release(cutShort && signal.aborted ? PLACE_HELD_AFTER_ABORT_MS : 0);
    }
  } finally {
    clearTimeout(timer);
    caller.removeEventListener("abort", onCallerGone);
  }
}

function departed(signal: AbortSignal): boolean {
  return signal.reason instanceof AttemptAbort && signal.reason.kind === "cancelled";
}

function timedOut(signal: AbortSignal): boolean {
  return signal.reason instanceof AttemptAbort && signal.reason.kind === "timeout";
}
