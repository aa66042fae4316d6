/**
 * Provider suspension (docs/protocol.md, "Suspension"): a provider that keeps failing, or that asks
 * for a wait, is left out of searches for a while instead of being called on every one. The state
 * lives in one gateway instance (on Workers, in one isolate), is read by the planner and written by
 * the fan-out, one verdict per attempt, and by the gateway's own probes.
 *
 * Per provider: closed (contacted), suspended (skipped until a time), then half-open (skipped until
 * the gateway's probe answers). A caller's query never decides a suspension: five consecutive
 * failures only start a probe of the gateway's own, which suspends the provider when it fails too,
 * and only such a probe ends a suspension. Only failures the provider caused count; a deadline,
 * departure, byte budget or queue of our own never does.
 *
 * Invariants:
 * - At most one probe of a provider is in flight: its deadline ends within its claim.
 * - A probe's verdict counts only in the state it was claimed in: a reset or a suspension since
 *   makes it news of nothing.
 */
import type { AttemptRecord } from "../protocol/envelope-schema.ts";
import {
  MAX_SUSPENSION_MS,
  SUSPEND_AFTER_FAILURES,
  SUSPENSION_BASE_MS,
  SUSPENSION_PROBE_GRACE_MS,
  SUSPENSION_PROBE_TIMEOUT_MS,
} from "../protocol/limits.ts";
import type { ProviderSpec } from "../protocol/manifest-schema.ts";
import type { Failure } from "../transport/failure.ts";

/** What our own queues did to an attempt (see QueueWatch). */
export type Queued = {
  /** Whether the attempt left our queues and was sent to the provider. */
  reached: boolean;
  /** Whether it waited in one of them first, so its provider had less than its whole timeout. */
  waited: boolean;
};

/** Why the planner skips a provider now: `until` as RFC 3339 (UTC), and how far that is. */
export type SuspendedNow = { until: string; inMs: number };

/** What `/v1/status` says of one provider's suspension. */
export type SuspensionView =
  | { state: "ready"; consecutiveFailures: number }
  | { state: "suspended"; until: string; consecutiveFailures: number };

/** One search's attempts reporting their outcomes. */
export interface AttemptWatch {
  /**
   * Records how an attempt ended. Returns text to append to the attempt's message when this
   * attempt suspended its provider or set off the gateway's probe of it, else "".
   */
  settle(spec: ProviderSpec, record: AttemptRecord, queues: Queued): string;
}

/** How one attempt or probe counts. */
export type Verdict =
  | { kind: "success" }
  | { kind: "failure"; waitMs: number | null }
  /** Neither: caused locally, or a failure no retry fixes (the provider answered). */
  | { kind: "neutral" };

/** The gateway's own probe of one provider, claimed: the only one in flight for it. */
export type ProbeClaim = {
  spec: ProviderSpec;
  /** The probe's deadline from now: within its claim, so it has ended before another may start. */
  deadlineMs(): number;
  /** Records the probe's verdict; call it once, whatever happened. */
  settle(verdict: Verdict): void;
};

/** Runs a claimed probe in the background; it must settle the claim, never throw. */
export type StartProbe = (claim: ProbeClaim) => void;

/** A time by the injected clock and by the wall clock. */
type Moment = { at: number; wall: number };

const CLOSED = { failures: 0, backoffs: 0, until: null, untilWall: 0, epoch: 0, probe: null };

type Breaker = {
  /** Retryable failures the provider caused since its last success. */
  failures: number;
  /** Suspensions by backoff since its last success: the n of 5 s × 2^(n-1). */
  backoffs: number;
  /** The end of the current suspension (by the injected clock), or null when closed. */
  until: number | null;
  untilWall: number;
  /** Moves on every suspension and reset: a probe claimed in another epoch proves nothing now. */
  epoch: number;
  /** The end of the claim of the gateway's probe in flight (to confirm failures or to resume). */
  probe: Moment | null;
  /** How long a claim of this provider's probe lasts: its deadline and the grace before it starts. */
  claimMs: number;
};

export class Suspensions {
  readonly #breakers = new Map<string, Breaker>();

  /**
   * `now` is the gateway's clock (monotonic, injectable in tests); `wallNow` turns its times into
   * the RFC 3339 `until` callers see, fixed once when a suspension or a probe starts.
   */
  constructor(
    private readonly now: () => number,
    private readonly wallNow: () => number,
  ) {}

  /** Why the planner must skip this provider now, or null when a search may contact it. */
  check(spec: ProviderSpec): SuspendedNow | null {
    const b = this.#breakers.get(spec.name);
    if (b === undefined) return null;
    const t = this.now();
    const held = this.#heldUntil(b, t);
    return held === null ? null : { until: iso(held.wall), inMs: Math.ceil(held.at - t) };
  }

  /**
   * Starts watching one admitted search. Every provider among `skipped` whose suspension has
   * ended and that no probe is out for gets the gateway's probe now, through `start`; the
   * search's own failures may start one later. Call it in the same turn as the plan.
   */
  watch(skipped: readonly ProviderSpec[], start: StartProbe): AttemptWatch {
    const t = this.now();
    for (const spec of skipped) {
      const b = this.#breakers.get(spec.name);
      if (b !== undefined && b.until !== null && t >= b.until) this.#claim(b, spec, start);
    }
    return { settle: (spec, record, queues) => this.#settle(spec, record, queues, start) };
  }

  /** The provider's suspension as `/v1/status` reports it. */
  view(name: string): SuspensionView {
    const b = this.#breakers.get(name);
    if (b === undefined) return { state: "ready", consecutiveFailures: 0 };
    const consecutiveFailures = b.failures;
    const held = this.#heldUntil(b, this.now());
    if (held === null) return { state: "ready", consecutiveFailures };
    return { state: "suspended", until: iso(held.wall), consecutiveFailures };
  }

  /** Until when a suspended provider is skipped, or null when it is closed. */
  #heldUntil(b: Breaker, t: number): Moment | null {
    if (b.until === null) return null;
    if (t < b.until) return { at: b.until, wall: b.untilWall };
    if (this.#probing(b, t)) return b.probe;
    // Half-open with no probe yet: the search that sees this starts one, which answers by then.
    return { at: t + b.claimMs, wall: this.wallNow() + b.claimMs };
  }

  #settle(spec: ProviderSpec, record: AttemptRecord, queues: Queued, start: StartProbe): string {
    const verdict = judge(record, queues);
    let b = this.#breakers.get(spec.name);
    if (b === undefined) {
      if (verdict.kind !== "failure") return "";
      b = { ...CLOSED, claimMs: probeDeadlineMs(spec) + SUSPENSION_PROBE_GRACE_MS };
      this.#breakers.set(spec.name, b);
    }
    // While suspended only the gateway's probe counts: attempts sent before say nothing new.
    if (b.until !== null) return "";
    switch (verdict.kind) {
      case "success":
        this.#reset(spec.name, b);
        return "";
      case "neutral":
        return "";
      case "failure": {
        b.failures++;
        // A wait is the provider's own word about all of it, so it needs no confirming.
        if (verdict.waitMs !== null) {
          this.#suspend(b, verdict.waitMs);
          return `; suspended for ${seconds(verdict.waitMs)} as it asked`;
        }
        if (b.failures >= SUSPEND_AFTER_FAILURES && this.#claim(b, spec, start)) {
          return `; ${b.failures} consecutive failures: the gateway probes it before suspending it`;
        }
        return "";
      }
      default: {
        const never: never = verdict;
        throw new Error(`unhandled verdict ${JSON.stringify(never)}`);
      }
    }
  }

  /** Claims the provider's one probe and starts it; false when a probe is already out. */
  #claim(b: Breaker, spec: ProviderSpec, start: StartProbe): boolean {
    const t = this.now();
    if (this.#probing(b, t)) return false;
    const probe: Moment = { at: t + b.claimMs, wall: this.wallNow() + b.claimMs };
    b.probe = probe;
    const epoch = b.epoch;
    const deadline = probeDeadlineMs(spec);
    start({
      spec,
      deadlineMs: () => Math.max(0, Math.min(deadline, probe.at - this.now())),
      settle: (verdict) => this.#probed(spec.name, probe, epoch, verdict),
    });
    return true;
  }

  #probed(name: string, probe: Moment, epoch: number, verdict: Verdict): void {
    const b = this.#breakers.get(name);
    if (b === undefined || b.probe !== probe) return;
    b.probe = null;
    const t = this.now();
    // Claimed to confirm (closed) or to end a suspension (half-open), and that state still holds.
    const current = b.epoch === epoch && (b.until === null || t >= b.until);
    if (!current) {
      if (b.until === null && b.failures === 0) this.#breakers.delete(name);
      return;
    }
    switch (verdict.kind) {
      case "success":
        this.#breakers.delete(name);
        return;
      case "neutral":
        // It proved nothing: the next failure, or the next search while half-open, probes again.
        return;
      case "failure": {
        b.failures++;
        b.backoffs++;
        this.#suspend(b, Math.max(backoffMs(b.backoffs), verdict.waitMs ?? 0));
        return;
      }
      default: {
        const never: never = verdict;
        throw new Error(`unhandled verdict ${JSON.stringify(never)}`);
      }
    }
  }

  /** One success resets everything; a probe still out keeps its place, so no second one starts. */
  #reset(name: string, b: Breaker): void {
    if (!this.#probing(b, this.now())) {
      this.#breakers.delete(name);
      return;
    }
    b.failures = 0;
    b.backoffs = 0;
    b.until = null;
    b.epoch++;
  }

  #suspend(b: Breaker, ms: number): void {
    b.until = this.now() + ms;
    b.untilWall = this.wallNow() + ms;
    b.epoch++;
  }

  #probing(b: Breaker, t: number): boolean {
    return b.probe !== null && t < b.probe.at;
  }
}

/** The n-th suspension by backoff: 5 s doubled each time, at most MAX_SUSPENSION_MS. */
export function backoffMs(n: number): number {
  // Past 2^1023 the power is Infinity, which the cap still bounds.
  return Math.min(MAX_SUSPENSION_MS, SUSPENSION_BASE_MS * 2 ** Math.max(0, n - 1));
}

/** A probe's deadline: its own, and never more than a search would give the provider. */
export function probeDeadlineMs(spec: ProviderSpec): number {
  return Math.min(SUSPENSION_PROBE_TIMEOUT_MS, spec.timeout_seconds * 1000);
}

/**
 * How an attempt or a probe counts against its provider. Never: the caller's deadline, a caller
 * that left, the search's byte budget, time lost in our own queues (a timeout after waiting in one
 * included). A failure no retry fixes (a refusal, an answer that breaks the protocol) shows the
 * provider answering, so it neither counts nor resets.
 */
export function judge(record: AttemptRecord | Failure, queues: Queued): Verdict {
  if (record.outcome === "success") return { kind: "success" };
  if (!queues.reached || !record.retryable) return { kind: "neutral" };
  if (record.outcome === "timeout" && queues.waited) return { kind: "neutral" };
  if (record.outcome === "cancelled" || record.code === "search_budget_exceeded") {
    return { kind: "neutral" };
  }
  if (record.outcome === "timeout" && record.budget === "caller_deadline") {
    return { kind: "neutral" };
  }
  const wait = record.retry_after_ms;
  return {
    kind: "failure",
    waitMs: wait === undefined || wait <= 0 ? null : Math.min(wait, MAX_SUSPENSION_MS),
  };
}

/** "5 s", "1.5 s": whole milliseconds as seconds, no trailing zeros. */
function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))} s`;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
