/**
 * The deadlines of one search's attempts. An attempt's signal fires when its budget runs out (an
 * AttemptAbort "timeout" naming the budget) or when the caller leaves ("cancelled"). Attempts with
 * the same deadline share one AbortController and one timer: a search's attempts start together,
 * so the providers of one timeout have one deadline, and an AbortSignal costs about 10 µs to make
 * on Node 20.
 */
import type { TimeoutBudget } from "../protocol/codes.ts";
import { AttemptAbort } from "../transport/attempt-abort.ts";

/**
 * Attempts that share one signal at most: Node warns of a leak past 10 listeners on one signal,
 * and a running attempt may hold two (a queue's and its exchange's).
 */
export const ATTEMPTS_PER_SIGNAL = 4;

/** One deadline, shared by the attempts that took it. */
export type Deadline = {
  readonly signal: AbortSignal;
  readonly controller: AbortController;
  readonly timer: ReturnType<typeof setTimeout>;
  readonly key: string;
  /** Attempts that took it, and how many of them still run. */
  takers: number;
  running: number;
};

export class Deadlines {
  /** Deadlines that more attempts may still share, by budget and duration. */
  readonly #open = new Map<string, Deadline>();
  readonly #live = new Set<Deadline>();

  /** `caller` fires when the caller leaves. */
  constructor(private readonly caller: AbortSignal) {}

  /** A deadline `budgetMs` from now for one attempt; `release` it once the attempt ended. */
  take(budget: TimeoutBudget, budgetMs: number): Deadline {
    const key = `${budget} ${budgetMs}`;
    let deadline = this.#open.get(key);
    if (deadline === undefined) {
      const controller = new AbortController();
      deadline = {
        signal: controller.signal,
        controller,
        timer: setTimeout(() => controller.abort(new AttemptAbort("timeout", budget)), budgetMs),
        key,
        takers: 0,
        running: 0,
      };
      if (this.caller.aborted) controller.abort(new AttemptAbort("cancelled"));
      this.#open.set(key, deadline);
      this.#live.add(deadline);
    }
    deadline.takers++;
    deadline.running++;
    if (deadline.takers === ATTEMPTS_PER_SIGNAL) this.#open.delete(key);
    return deadline;
  }

  /** One attempt that took `deadline` has ended; the last one stops its timer. */
  release(deadline: Deadline): void {
    deadline.running--;
    if (deadline.running > 0) return;
    clearTimeout(deadline.timer);
    this.#live.delete(deadline);
    if (this.#open.get(deadline.key) === deadline) this.#open.delete(deadline.key);
  }

  /** The caller left: every attempt still running is cancelled. */
  cancel(): void {
    for (const deadline of this.#live) deadline.controller.abort(new AttemptAbort("cancelled"));
  }
}
