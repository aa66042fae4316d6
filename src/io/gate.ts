/**
 * A gate bounds how much work runs at once: acquire a place, and give it back with the function it
 * resolves to. Waiters whose signal aborts leave the queue and never hold a place.
 */
export interface Gate {
  /** Resolves to the place's Release; rejects with the signal's reason if it aborts first. */
  acquire(signal: AbortSignal): Promise<Release>;
}

/**
 * Gives a place back, at once or `holdMs` later: a call cut short may still be closing its
 * connection, and the place stays taken until the other side can have seen it close. Calling it
 * again does nothing.
 */
export type Release = (holdMs?: number) => void;

/**
 * A counting semaphore whose waiters leave the queue when their signal aborts, so a queued attempt
 * that times out or is cancelled never holds a place. A place held after its release comes back on
 * a timer and, should a runtime drop that timer (Workers may drop work left after an answer), at
 * the next acquire after its time: no place is ever lost.
 */
export class Semaphore implements Gate {
  #free: number;
  readonly #waiters: Array<() => void> = [];
  /** When each held place comes back (performance.now), earliest first. */
  readonly #returning: number[] = [];
  #timer: ReturnType<typeof setTimeout> | null = null;
  /** When the timer should have fired; past that, it was dropped and is set again. */
  #timerDue = 0;

  constructor(permits: number) {
    this.#free = permits;
  }

  acquire(signal: AbortSignal): Promise<Release> {
    if (signal.aborted) return Promise.reject(signal.reason);
    this.#reclaim();
    if (this.#free > 0) {
      this.#free--;
      return Promise.resolve(this.#releaser());
    }
    return new Promise((resolve, reject) => {
      const grant = () => {
        signal.removeEventListener("abort", onAbort);
        resolve(this.#releaser());
      };
      const onAbort = () => {
        const i = this.#waiters.indexOf(grant);
        if (i !== -1) this.#waiters.splice(i, 1);
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.#waiters.push(grant);
      this.#wake();
    });
  }

  #releaser(): Release {
    let released = false;
    return (holdMs = 0) => {
      if (released) return;
      released = true;
      if (holdMs <= 0) return this.#give();
      const at = performance.now() + holdMs;
      let i = this.#returning.length;
      while (i > 0 && (this.#returning[i - 1] as number) > at) i--;
      this.#returning.splice(i, 0, at);
      this.#wake();
    };
  }

  /** One place to the first waiter, or back to the free ones. */
  #give(): void {
    const next = this.#waiters.shift();
    if (next) next();
    else this.#free++;
  }

  /** Held places whose time has come. */
  #reclaim(): void {
    const now = performance.now();
    while (this.#returning.length > 0 && (this.#returning[0] as number) <= now) {
      this.#returning.shift();
      this.#give();
    }
  }

  /** A timer for the next held place, set again when a runtime dropped the last one. */
  #wake(): void {
    const next = this.#returning[0];
    if (next === undefined) return;
    if (this.#timer !== null && performance.now() <= this.#timerDue + TIMER_SLACK_MS) return;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timerDue = next;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#reclaim();
      this.#wake();
    }, Math.max(0, next - performance.now()));
  }
}

/** How late a timer may fire on a busy event loop before it counts as dropped. */
const TIMER_SLACK_MS = 1_000;
