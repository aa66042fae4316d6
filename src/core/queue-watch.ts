/**
 * QueueWatch: one of our own gates (a provider's `max_concurrency`, a search's connections) as one attempt
 * sees it: whether the attempt had to wait for a place, and whether its deadline or departure
 * caught it still waiting. Either way that time was lost to our queue, not to the provider
 * (docs/protocol.md, "Suspension").
 */
import type { Gate } from "../io/gate.ts";

export class QueueWatch implements Gate {
  #waited = false;
  #lost = false;

  constructor(private readonly inner: Gate) {}

  /** Whether the attempt waited for a place rather than finding one free. */
  get waited(): boolean {
    return this.#waited;
  }

  /** Whether the attempt gave up while still waiting. */
  get lost(): boolean {
    return this.#lost;
  }

  async acquire(signal: AbortSignal): Promise<() => void> {
    let granted = false;
    const pending = this.inner.acquire(signal).then(
      (release) => {
        granted = true;
        return release;
      },
      (error: unknown) => {
        this.#lost = true;
        throw error;
      },
    );
    // A free place is granted at once, so its callback runs before this turn ends; a queued one not.
    await Promise.resolve();
    if (!granted) this.#waited = true;
    return await pending;
  }
}
