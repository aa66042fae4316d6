/**
 * A count of places with a limit (searches in flight). Only a holder gives a place back, and giving
 * it back twice is harmless, so the count never drifts.
 */
export class Slots {
  #taken = 0;

  constructor(readonly limit: number) {}

  /** How many places are held now. */
  get taken(): number {
    return this.#taken;
  }

  /** A place, as the function that gives it back; null when every place is held. */
  tryTake(): (() => void) | null {
    if (this.#taken >= this.limit) return null;
    this.#taken++;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.#taken--;
    };
  }
}
