/**
 * A fan-out in flight, shared by every identical search that arrives before it ends
 * (docs/envelope.md, "Coalescing"). Each caller waiting on it gets the plan and the provider
 * events, those already emitted first; the fan-out is aborted only when the last caller leaves.
 * The fan-out is this instance's own, or another instance's that it follows (shared-flight.ts).
 */
import type { AttemptRecord, Decision } from "../protocol/envelope-schema.ts";
import type { SearchHooks } from "../core/search.ts";
import type { CompletedSearch } from "../protocol/envelope-schema.ts";

export type OnAttempt = (index: number, record: AttemptRecord) => void;

/** A started fan-out: whether it follows another instance's, and its end. */
export type FlightSource = {
  /** True once known to follow another instance's flight; false when this instance runs it. */
  joined: Promise<boolean>;
  result: Promise<CompletedSearch>;
};

/** Starts the fan-out a flight waits on; `signal` fires when its last caller left. */
export type StartFlight = (signal: AbortSignal, onAttempt: OnAttempt) => FlightSource;

export class Flight {
  readonly #decision: Decision;
  /** Attempts finished so far, in completion order, for callers who join late. */
  readonly #attempts: [number, AttemptRecord][] = [];
  readonly #listeners = new Set<OnAttempt>();
  readonly #controller = new AbortController();
  readonly #result: Promise<CompletedSearch>;
  readonly #joined: Promise<boolean>;
  #callers = 0;
  #settled = false;
  readonly #closed: () => void;

  /**
   * Starts the fan-out now; `closed` is called once no new caller may join: the fan-out ended,
   * or every caller left.
   */
  constructor(decision: Decision, start: StartFlight, closed: () => void) {
    this.#decision = decision;
    this.#closed = closed;
    const source = start(this.#controller.signal, (index, record) => {
      this.#attempts.push([index, record]);
      for (const listener of [...this.#listeners]) listener(index, record);
    });
    // Not knowing whether another instance runs it is the same as running it here.
    this.#joined = source.joined.catch(() => false);
    this.#result = source.result.finally(() => {
      this.#settled = true;
      closed();
    });
    // Every caller awaits the result; this only keeps a fault from also surfacing as unhandled.
    this.#result.catch(() => {});
  }

  /** What the fan-out's plan decided, as every caller is told it. */
  get decision(): Decision {
    return this.#decision;
  }

  /** Counts one more caller; the function returned counts it out (once, however often called). */
  join(): () => void {
    this.#callers++;
    let here = true;
    return () => {
      if (!here) return;
      here = false;
      this.#callers--;
      if (this.#callers === 0 && !this.#settled) {
        this.#closed();
        this.#controller.abort();
      }
    };
  }

  /**
   * Waits for the fan-out on behalf of one caller (counted in by `join`), telling it the plan and
   * every provider event, and answers with the search as that caller sees it.
   */
  async follow(
    hooks: SearchHooks & { signal: AbortSignal },
    coalesced: boolean,
    leave: () => void,
  ): Promise<CompletedSearch> {
    const decision: Decision = { ...this.#decision, coalesced: coalesced || await this.#joined };
    hooks.onPlan?.(decision);
    const onAttempt = hooks.onAttempt;
    if (onAttempt) {
      for (const [index, record] of this.#attempts) onAttempt(index, record);
      this.#listeners.add(onAttempt);
    }
    const gone = () => {
      if (onAttempt) this.#listeners.delete(onAttempt);
      leave();
    };
    const { signal } = hooks;
    if (signal.aborted) gone();
    else signal.addEventListener("abort", gone, { once: true });
    try {
      const completed = await this.#result;
      return { ...completed, result: { ...completed.result, decision } };
    } finally {
      signal.removeEventListener("abort", gone);
      gone();
    }
  }
}
