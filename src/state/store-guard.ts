/**
 * The one guard of a gateway instance's calls to a shared store (docs/deploy.md, "Shared state"):
 * the shared state's operations (GuardedState) and the answer cache's calls (redis-cache.ts,
 * durable-cache.ts) alike, so they share one timeout, one back-off, one fallback count and the one
 * `shared_state` entry of `/v1/status`, however the store was configured.
 *
 * Invariants:
 * - No call throws and none waits past min(its timeout, what is left of the search it serves): a
 *   store that fails costs a search at most one timeout, and none at all until STORE_RETRY_MS
 *   later, when one call tries it again while the calls that arrive meanwhile wait for its verdict.
 * - A fallback is counted and the guard reads `degraded` with a reason that names no URL, no
 *   address and no secret, until the first call the store answers.
 * - A call cut short by its search's budget falls back, and is counted, but does not judge the
 *   store: it had less than the store's timeout.
 */
import { STORE_RETRY_MS } from "../protocol/state-limits.ts";
import type { SharedStateStatus } from "../protocol/envelope-schema.ts";
import { StoreFailure } from "./state-store.ts";

/** A call's wait cut short by what was left of its search's budget. */
class BudgetSpent extends Error {}

export type StoreGuardOptions = {
  /** TRACEFETCH_STATE_TIMEOUT_MS: how long one call may take. */
  timeoutMs: number;
  /** This instance's monotonic clock, for the retry. */
  now: () => number;
};

/** A guard's state as `/v1/status` shows it, less the backend its holder names. */
export type GuardStatus = Omit<SharedStateStatus, "backend">;

export class StoreGuard {
  #fallbacks = 0;
  /** Why the last call failed; null while the store answers. */
  #failure: string | null = null;
  #retryAt = 0;
  /** Settles when the call retrying a failing store has its verdict; null when none is out. */
  #trial: Promise<void> | null = null;

  constructor(private readonly options: StoreGuardOptions) {}

  status(): GuardStatus {
    const fallbacks = this.#fallbacks;
    return this.#failure === null
      ? { state: "ok", fallbacks }
      : { state: "degraded", reason: this.#failure, fallbacks };
  }

  /**
   * One store operation within the timeout (and `extraMs` more, for a read that may wait), and
   * within `budgetMs`, what is left of the search it serves; its fallback when the store fails or
   * the budget runs out, or at once while the store is failing and no retry is due. While one
   * operation retries a failing store, the others wait for its verdict (at most their own bound),
   * so a store that came back counts a burst's searches itself rather than each instance's memory.
   */
  async guard<T>(
    operation: (signal: AbortSignal) => Promise<T>,
    fallback: () => T | Promise<T>,
    extraMs = 0,
    budgetMs = Infinity,
  ): Promise<T> {
    const started = this.options.now();
    const full = this.options.timeoutMs + extraMs;
    if (this.#failure !== null) {
      if (this.#trial !== null) {
        await this.#waitFor(this.#trial, Math.min(full, budgetMs));
      } else if (started >= this.#retryAt) {
        // This operation tries the store; the others meanwhile wait for what it finds.
        this.#retryAt = started + STORE_RETRY_MS;
        return await this.#attempt(operation, fallback, full, budgetMs, true);
      }
      if (this.#failure !== null) {
        this.#fallbacks++;
        return await fallback();
      }
    }
    const left = budgetMs - (this.options.now() - started);
    return await this.#attempt(operation, fallback, full, left, false);
  }

  /** Runs one operation within `min(full, budgetMs)`; `trial`: its verdict is waited for. */
  async #attempt<T>(
    operation: (signal: AbortSignal) => Promise<T>,
    fallback: () => T | Promise<T>,
    full: number,
    budgetMs: number,
    trial: boolean,
  ): Promise<T> {
    if (budgetMs <= 0) {
      // The search has no time left to wait for anything: its memory answers, and the store,
      // never asked, is not judged.
      this.#fallbacks++;
      return await fallback();
    }
    const limit = Math.min(full, budgetMs);
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    let settled!: () => void;
    if (trial) this.#trial = new Promise<void>((resolve) => (settled = resolve));
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const failure = limit < full
          ? new BudgetSpent()
          : new StoreFailure(`the store did not answer within ${limit} ms`);
        controller.abort(failure);
        reject(failure);
      }, limit);
    });
    try {
      const running = operation(controller.signal);
      // Past its timeout an operation is abandoned; its failure, if any, is settled here.
      running.catch(() => {});
      const value = await Promise.race([running, late]);
      this.#failure = null;
      return value;
    } catch (error) {
      this.#fallbacks++;
      // A store cut short by a search's own deadline had less than its timeout: not a failure.
      if (!(error instanceof BudgetSpent)) {
        if (!(error instanceof StoreFailure)) {
          // An adapter turns its client's errors into StoreFailure: anything else is a fault.
          console.error("shared state: an operation failed unexpectedly:", error);
        }
        this.#failure = error instanceof StoreFailure ? error.reason : "the store failed";
        this.#retryAt = this.options.now() + STORE_RETRY_MS;
      }
      return await fallback();
    } finally {
      clearTimeout(timer);
      if (trial) {
        this.#trial = null;
        settled();
      }
    }
  }

  /** Waits for `trial` to settle, or `ms`, whichever comes first. */
  async #waitFor(trial: Promise<void>, ms: number): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([trial, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
    clearTimeout(timer);
  }

  /**
   * One call of the answer cache (redis-cache.ts, durable-cache.ts) under this guard: null when the
   * store failed, timed out, or is left alone; its failures count and show as the state's.
   */
  run<T>(call: () => Promise<T>, budgetMs?: number): Promise<T | null> {
    return this.guard<T | null>(() => call(), () => null, 0, budgetMs);
  }
}
