/**
 * One provider's breaker (docs/protocol.md, "Suspension") as a value and one pure step: the state
 * every shared-state adapter keeps, in process, in a Durable Object (which runs this very code) or
 * in Redis (whose Lua script is held to it by the state contract tests). Times are milliseconds by
 * the adapter's clock: the gateway's monotonic clock in process, the store's own clock when shared,
 * so instances whose clocks disagree still agree on the store's.
 *
 * Per provider: closed (contacted), suspended (skipped until a time), then half-open (skipped until
 * the gateway's probe answers). A caller's query never decides a suspension: five consecutive
 * failures only claim a probe of the gateway's own, which suspends the provider when it fails too,
 * and only such a probe ends a suspension.
 *
 * Invariants:
 * - At most one probe of a provider is claimed at a time: a claim lasts past its probe's deadline.
 * - A probe's verdict counts only in the state it was claimed in: a reset or a suspension since
 *   (the epoch moved) makes it news of nothing.
 * - A state with nothing to remember is no state (null): the store keeps only what matters.
 */
import {
  MAX_SUSPENSION_MS,
  SUSPEND_AFTER_FAILURES,
  SUSPENSION_BASE_MS,
} from "../protocol/limits.ts";

/** A breaker as stored: plain JSON, the same in every adapter. */
export type Breaker = {
  /** Retryable failures the provider caused since its last success. */
  failures: number;
  /** Suspensions by backoff since its last success: the n of 5 s × 2^(n-1). */
  backoffs: number;
  /** The end of the current suspension, or null when closed. */
  until: number | null;
  /** The same moment by the wall clock, for the `until` callers read. */
  untilWall: number;
  /** Moves on every suspension and reset. */
  epoch: number;
  /** The end of the claim of the gateway's probe in flight, or null when none is out. */
  probeUntil: number | null;
  probeWall: number;
};

/** How one attempt or probe counts. */
export type Verdict =
  | { kind: "success" }
  | { kind: "failure"; waitMs: number | null }
  /** Neither: caused locally, or a failure no retry fixes (the provider answered). */
  | { kind: "neutral" };

export type BreakerEvent =
  /** A search's attempt ended. */
  | { kind: "attempt"; verdict: Verdict }
  /** A search skipped the provider as suspended: once the suspension ended, its probe is due. */
  | { kind: "resume" }
  /** The gateway's probe, claimed in `epoch` until `probeUntil`, answered. */
  | { kind: "probed"; epoch: number; probeUntil: number; verdict: Verdict };

/** What a step did, besides its new state. */
export type BreakerEffect =
  | { kind: "none" }
  /** The provider asked for a wait, and is suspended for it. */
  | { kind: "waiting"; ms: number }
  /** The one probe is claimed, to confirm `failures` (`confirm`) or to end a suspension. */
  | { kind: "claimed"; confirm: boolean; epoch: number; probeUntil: number; failures: number };

/** The moment a step happens: by the adapter's clock, and by the wall clock. */
export type Moment = { now: number; wall: number };

/** One event applied to a breaker; `claimMs` is how long a probe claim of this provider lasts. */
export function breakerStep(
  b: Breaker | null,
  event: BreakerEvent,
  t: Moment,
  claimMs: number,
): { breaker: Breaker | null; effect: BreakerEffect } {
  const none = (breaker: Breaker | null) => ({ breaker, effect: { kind: "none" } as const });
  switch (event.kind) {
    case "attempt": {
      const { verdict } = event;
      if (b === null) {
        if (verdict.kind !== "failure") return none(null);
        b = closed();
      }
      // While suspended only the gateway's probe counts: attempts sent before say nothing new.
      if (b.until !== null) return none(b);
      if (verdict.kind === "neutral") return none(b);
      if (verdict.kind === "success") return none(reset(b, t));
      const failed = { ...b, failures: b.failures + 1 };
      // A wait is the provider's own word about all of it, so it needs no confirming.
      if (verdict.waitMs !== null) {
        return {
          breaker: suspend(failed, verdict.waitMs, t),
          effect: { kind: "waiting", ms: verdict.waitMs },
        };
      }
      if (failed.failures >= SUSPEND_AFTER_FAILURES && !probing(failed, t)) {
        return claim(failed, t, claimMs, true);
      }
      return none(failed);
    }
    case "resume":
      if (b === null || b.until === null || t.now < b.until || probing(b, t)) return none(b);
      return claim(b, t, claimMs, false);
    case "probed": {
      if (b === null || b.probeUntil !== event.probeUntil) return none(b);
      const settled = { ...b, probeUntil: null };
      // Claimed to confirm (closed) or to end a suspension (half-open), and that state still holds.
      const current = b.epoch === event.epoch && (b.until === null || t.now >= b.until);
      if (!current) return none(forgettable(settled) ? null : settled);
      switch (event.verdict.kind) {
        case "success":
          return none(null);
        case "neutral":
          // It proved nothing: the next failure, or the next search while half-open, probes again.
          return none(settled);
        case "failure": {
          const backoffs = settled.backoffs + 1;
          const ms = Math.max(backoffMs(backoffs), event.verdict.waitMs ?? 0);
          return none(suspend({ ...settled, failures: settled.failures + 1, backoffs }, ms, t));
        }
        default: {
          const never: never = event.verdict;
          throw new Error(`unhandled verdict ${JSON.stringify(never)}`);
        }
      }
    }
    default: {
      const never: never = event;
      throw new Error(`unhandled breaker event ${JSON.stringify(never)}`);
    }
  }
}

/** Until when a search skips the provider (by the adapter's clock and the wall's), or null. */
export function heldUntil(b: Breaker | null, t: Moment, claimMs: number): Moment | null {
  if (b === null || b.until === null) return null;
  if (t.now < b.until) return { now: b.until, wall: b.untilWall };
  if (probing(b, t)) return { now: b.probeUntil as number, wall: b.probeWall };
  // Half-open with no probe yet: the search that sees this starts one, which answers by then.
  return { now: t.now + claimMs, wall: t.wall + claimMs };
}

/** The n-th suspension by backoff: 5 s doubled each time, at most MAX_SUSPENSION_MS. */
export function backoffMs(n: number): number {
  // Past 2^1023 the power is Infinity, which the cap still bounds.
  return Math.min(MAX_SUSPENSION_MS, SUSPENSION_BASE_MS * 2 ** Math.max(0, n - 1));
}

function closed(): Breaker {
  return {
    failures: 0,
    backoffs: 0,
    until: null,
    untilWall: 0,
    epoch: 0,
    probeUntil: null,
    probeWall: 0,
  };
}

function probing(b: Breaker, t: Moment): boolean {
  return b.probeUntil !== null && t.now < b.probeUntil;
}

/** One success resets everything; a probe still out keeps its claim, so no second one starts. */
function reset(b: Breaker, t: Moment): Breaker | null {
  if (!probing(b, t)) return null;
  return { ...b, failures: 0, backoffs: 0, until: null, untilWall: 0, epoch: b.epoch + 1 };
}

function suspend(b: Breaker, ms: number, t: Moment): Breaker {
  return { ...b, until: t.now + ms, untilWall: t.wall + ms, epoch: b.epoch + 1 };
}

function claim(
  b: Breaker,
  t: Moment,
  claimMs: number,
  confirm: boolean,
): { breaker: Breaker; effect: BreakerEffect } {
  const probeUntil = t.now + claimMs;
  return {
    breaker: { ...b, probeUntil, probeWall: t.wall + claimMs },
    effect: { kind: "claimed", confirm, epoch: b.epoch, probeUntil, failures: b.failures },
  };
}

/** A closed breaker with no failures and no probe out remembers nothing. */
function forgettable(b: Breaker): boolean {
  return b.until === null && b.failures === 0 && b.probeUntil === null;
}
