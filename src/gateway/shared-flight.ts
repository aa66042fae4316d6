/**
 * Coalescing across instances (docs/envelope.md, "Coalescing"): an identical search in flight on
 * another instance is followed through the shared store instead of run again. The leading
 * instance publishes each attempt and the finished search once someone follows; a follower hands
 * them to its callers as if its own fan-out had made them, and builds its own envelopes.
 *
 * Invariants:
 * - Only searches whose every provider is public take part (the gateway decides, gateway-state.ts):
 *   nothing a token unlocked is written to a shared store.
 * - A follower whose leader dies, is cut off or is left by all its callers runs the search itself
 *   (it may lead others who followed): nothing is lost, at worst done twice.
 * - A follower passes each provider's attempt on once, however many leaders it saw.
 * - What a leader publishes carries no query: its finished search goes out with `result.query`
 *   empty, and each follower puts back its own (identical searches have the same query).
 */
import type { AttemptRecord, CompletedSearch } from "../protocol/envelope-schema.ts";
import type { FlightRole, SharedState } from "../state/shared-state.ts";
import type { OnAttempt, StartFlight } from "./flight.ts";

/** What a flight's leader publishes: each attempt as it ends, then the finished search. */
type FlightMessage =
  | { kind: "attempt"; index: number; record: AttemptRecord }
  | { kind: "done"; completed: CompletedSearch };

/** Runs the search on this instance. */
type RunHere = (signal: AbortSignal, onAttempt: OnAttempt) => Promise<CompletedSearch>;

/** Runs work after the answer, kept alive by the runtime (a search's Background). */
type Later = (work: () => Promise<void>) => void;

/**
 * Leaders a follower tries before it runs the search alone: each takeover means a leader died,
 * and a store that keeps losing them is not worth waiting on.
 */
const MAX_FLIGHT_ROUNDS = 3;

/**
 * A flight shared through `state` under `identity`, run here by `runHere` when it must be; a
 * leader's last write to the store goes through `later`, after its callers have their answer.
 * `query` is this search's, put back into a finished search read from the store. `claimed`: the
 * first round's role, claimed with the search's other calls to the store; `budgetMs`: what is
 * left of the search, which bounds each later claim.
 */
export function sharedFlight(
  state: SharedState,
  identity: string,
  query: string,
  runHere: RunHere,
  later: Later,
  claimed: Promise<FlightRole | null>,
  budgetMs: () => number,
): StartFlight {
  return (signal, onAttempt) => {
    let joined!: (followed: boolean) => void;
    const known = new Promise<boolean>((resolve) => (joined = resolve));
    const passed = new Set<number>();
    const once: OnAttempt = (index, record) => {
      if (passed.has(index)) return;
      passed.add(index);
      onAttempt(index, record);
    };
    const result = (async () => {
      for (let round = 0; round < MAX_FLIGHT_ROUNDS && !signal.aborted; round++) {
        const role = round === 0 ? await claimed : await state.flight(identity, budgetMs());
        if (role?.kind !== "follow") {
          joined(round > 0);
          return role === null
            ? await runHere(signal, once)
            : await lead(role, runHere, signal, once, later);
        }
        joined(true);
        const done = await follow(role, signal, once);
        if (done !== null) return { ...done, result: { ...done.result, query } };
      }
      joined(true);
      return await runHere(signal, once);
    })();
    result.catch(() => joined(false));
    return { joined: known, result };
  };
}

/** Runs the search here, publishing for whoever follows; with no result if every caller left. */
async function lead(
  role: Extract<FlightRole, { kind: "lead" }>,
  runHere: RunHere,
  signal: AbortSignal,
  onAttempt: OnAttempt,
  later: Later,
): Promise<CompletedSearch> {
  let completed: CompletedSearch;
  try {
    completed = await runHere(signal, (index, record) => {
      onAttempt(index, record);
      role.emit({ kind: "attempt", index, record } satisfies FlightMessage);
    });
  } catch (error) {
    await role.end(null);
    throw error;
  }
  // A search its callers left ends cancelled: followers run it themselves rather than take that.
  const last = signal.aborted ? null : {
    kind: "done",
    // The store never reads a query: each follower knows its own.
    completed: { ...completed, result: { ...completed.result, query: "" } },
  } satisfies FlightMessage;
  // The callers here need nothing from the store to have their answer, so it does not wait for a
  // round trip; followers poll until the end lands, and the lease covers them until then.
  later(() => role.end(last));
  return completed;
}

/** Lets go of a flight claimed for a search that will not run it (refused, or answered). */
export function letGo(claimed: Promise<FlightRole | null> | null): Promise<void> {
  return (claimed ?? Promise.resolve(null)).then(
    (role) => role?.kind === "lead" ? role.end(null) : undefined,
    () => undefined,
  );
}

/** Passes on another instance's events; its finished search, or null when it was orphaned. */
async function follow(
  role: Extract<FlightRole, { kind: "follow" }>,
  signal: AbortSignal,
  onAttempt: OnAttempt,
): Promise<CompletedSearch | null> {
  for await (const event of role.events(signal)) {
    if (event.kind === "orphaned") return null;
    const message = messageOf(event.event);
    // Something this gateway never publishes: treated as a leader gone, so the search runs here.
    if (message === null) return null;
    if (message.kind === "done") return message.completed;
    onAttempt(message.index, message.record);
  }
  return null;
}

/** The message a leader published, by its shape; null for anything else. */
function messageOf(value: unknown): FlightMessage | null {
  if (typeof value !== "object" || value === null) return null;
  const m = value as Record<string, unknown>;
  if (m.kind === "attempt" && Number.isSafeInteger(m.index) && typeof m.record === "object") {
    return m as FlightMessage;
  }
  if (m.kind === "done" && typeof m.completed === "object" && m.completed !== null) {
    return m as FlightMessage;
  }
  return null;
}
