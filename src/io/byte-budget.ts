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

/** One attempt's share of its search's budget: it takes from the search's and counts what it took. */
export class CountedBudget extends ByteBudget {
  readonly #of: ByteBudget;
  /** Decoded bytes this attempt took. */
  taken = 0;
  constructor(of: ByteBudget) {
    super(0);
    this.#of = of;
  }
  override get remaining(): number {
    return this.#of.remaining;
  }
  override take(n: number): boolean {
    if (!this.#of.take(n)) return false;
    this.taken += n;
    return true;
  }
}
