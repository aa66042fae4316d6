/**
 * A gate bounds how much work runs at once: acquire a place, and give it back with the function it
 * resolves to. Waiters whose signal aborts leave the queue and never hold a place.
 */
export interface Gate {
  /** Resolves to a release function (calling it twice gives back one place); rejects with the signal's reason if it aborts first. */
  acquire(signal: AbortSignal): Promise<() => void>;
}

/**
 * A counting semaphore whose waiters leave the queue when their signal aborts, so a queued attempt
 * that times out or is cancelled never holds a place.
 */
export class Semaphore implements Gate {
  #free: number;
  readonly #waiters: Array<() => void> = [];

  constructor(permits: number) {
    this.#free = permits;
  }

  /** Resolves to a release function; rejects with the signal's reason if it aborts first. */
  acquire(signal: AbortSignal): Promise<() => void> {
    if (signal.aborted) return Promise.reject(signal.reason);
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
    });
  }

  #releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiters.shift();
      if (next) next();
      else this.#free++;
    };
  }
}
