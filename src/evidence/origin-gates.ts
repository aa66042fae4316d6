/**
 * The requests a gateway instance's crawls have in flight to each origin, bounded together: two
 * crawls of one site at once share its MAX_CRAWL_IN_FLIGHT places. An origin's gate lives while a
 * request holds or waits for one of its places, so the map holds only the origins being crawled.
 */
import { type Release, Semaphore } from "../io/gate.ts";
import { MAX_CRAWL_IN_FLIGHT } from "../protocol/crawl-limits.ts";

export class OriginGates {
  readonly #gates = new Map<string, { gate: Semaphore; users: number }>();

  /** A place for one request to `origin`; rejects with the signal's reason if it aborts first. */
  async acquire(origin: string, signal: AbortSignal): Promise<Release> {
    let entry = this.#gates.get(origin);
    if (entry === undefined) {
      entry = { gate: new Semaphore(MAX_CRAWL_IN_FLIGHT), users: 0 };
      this.#gates.set(origin, entry);
    }
    const held = entry;
    held.users += 1;
    const leave = () => {
      held.users -= 1;
      if (held.users === 0 && this.#gates.get(origin) === held) this.#gates.delete(origin);
    };
    let release: Release;
    try {
      release = await held.gate.acquire(signal);
    } catch (error) {
      leave();
      throw error;
    }
    let given = false;
    return () => {
      if (given) return;
      given = true;
      release();
      leave();
    };
  }

  /** Origins with a request holding or waiting for a place. */
  get size(): number {
    return this.#gates.size;
  }
}
