/** The decoded bytes one search may still read across all its attempts (docs/protocol.md). */
export class ByteBudget {
  #remaining: number;
  constructor(total: number) {
    this.#remaining = total;
  }
  get remaining(): number {
    return this.#remaining;
  }
  /** Takes `n` bytes; false (and nothing taken) when the search cannot afford them. */
  take(n: number): boolean {
    if (n > this.#remaining) return false;
    this.#remaining -= n;
    return true;
  }
}
