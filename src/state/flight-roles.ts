/**
 * A flight's two roles over a shared store (docs/envelope.md, "Coalescing"): the instance that
 * leads runs the search and renews its lease; the others follow its events.
 *
 * Invariants:
 * - The leader publishes nothing until a follower registered: a search no one else asked for
 *   costs one claim and one end, and writes no result to the store.
 * - A follower sees every event from the first, in order, then either the last one or `orphaned`
 *   (the leader died, was cut off, or every one of its callers left): never a silent end.
 * - The store failing makes the leader go on alone and its followers orphaned: each instance then
 *   runs the search itself, so nothing is lost, at worst done twice.
 */
import {
  FLIGHT_LEASE_MS,
  FLIGHT_POLL_MS,
  FLIGHT_READ_WAIT_MS,
  FLIGHT_RENEW_MS,
} from "../protocol/state-limits.ts";
import type { FlightEvent, FlightRole } from "./shared-state.ts";
import type { FlightProgress, StateStore } from "./state-store.ts";

/** What the roles need of GuardedState: the store, and each call bounded with its fallback. */
export interface GuardedStore {
  readonly store: StateStore;
  guard<T>(
    operation: (signal: AbortSignal) => Promise<T>,
    fallback: () => T | Promise<T>,
    extraMs?: number,
    budgetMs?: number,
  ): Promise<T>;
}

type Lead = Extract<FlightRole, { kind: "lead" }>;

/** Leads flight `id` of `key`: renews its lease until it ends, or `stop` (the instance closes). */
export function leadFlight(
  g: GuardedStore,
  key: string,
  id: string,
): { role: Lead; stop: () => void } {
  const unsent: unknown[] = [];
  let waited = false;
  let held = true;
  let over = false;
  /** Publications in order: each waits for the one before. */
  let sending: Promise<void> = Promise.resolve();
  const publish = (last: boolean) => {
    const batch = unsent.splice(0);
    sending = sending.then(() =>
      g.guard((signal) => g.store.publishFlight(key, id, batch, last, signal), () => undefined)
    );
    return sending;
  };
  const renewal = setInterval(async () => {
    // The store failing is no reason to stop: the lease lapses, and followers run it themselves.
    const renewed = await g.guard(
      (signal) => g.store.renewFlight(key, id, FLIGHT_LEASE_MS, signal),
      () => ({ held: true, waited: false }),
    );
    if (over) return;
    if (!renewed.held) {
      // Taken over after a lapse: the flight is another instance's now, and so are its followers.
      held = false;
      stop();
    } else if (renewed.waited && !waited) {
      waited = true;
      void publish(false);
    }
  }, FLIGHT_RENEW_MS);
  const stop = () => {
    over = true;
    clearInterval(renewal);
  };
  const role: Lead = {
    kind: "lead",
    emit: (event) => {
      if (over) return;
      unsent.push(event);
      if (waited) void publish(false);
    },
    end: async (last) => {
      const wasHeld = held && !over;
      stop();
      if (!wasHeld) return;
      if (last === null) {
        await g.guard((signal) => g.store.dropFlight(key, id, signal), () => undefined);
        return;
      }
      const waiting = waited ||
        await g.guard((signal) => g.store.endFlight(key, id, FLIGHT_LEASE_MS, signal), () => false);
      if (!waiting) return;
      unsent.push(last);
      await publish(true);
    },
  };
  return { role, stop };
}

/** Follows flight `id` of `key`, led by another instance. */
export function followFlight(g: GuardedStore, key: string, id: string): FlightRole {
  return {
    kind: "follow",
    events: async function* (signal: AbortSignal): AsyncGenerator<FlightEvent> {
      let from = 0;
      while (!signal.aborted) {
        const progress: FlightProgress = await g.guard(
          (s) => g.store.readFlight(key, id, from, FLIGHT_READ_WAIT_MS, s),
          // Cut off from the leader: this instance runs the search itself.
          () => ({ events: [], state: "orphaned" as const }),
          FLIGHT_READ_WAIT_MS,
        );
        for (const event of progress.events) yield { kind: "event", event };
        from += progress.events.length;
        if (progress.state === "ended") return;
        if (progress.state === "orphaned") {
          yield { kind: "orphaned" };
          return;
        }
        if (progress.events.length === 0) await pause(FLIGHT_POLL_MS, signal);
      }
    },
  };
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
