/**
 * The reasons an attempt's AbortSignal fires. The fan-out aborts with one of these so that the
 * classifier can tell a deadline (and which one) from a caller who went away.
 */
import type { TimeoutBudget } from "../protocol/codes.ts";

export class AttemptAbort extends Error {
  constructor(
    readonly kind: "timeout" | "cancelled",
    readonly budget: TimeoutBudget | null = null,
  ) {
    super(kind === "timeout" ? `deadline fired (${budget})` : "the caller went away");
    this.name = "AttemptAbort";
  }
}
