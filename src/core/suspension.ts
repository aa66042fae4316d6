/**
 * Provider suspension (docs/protocol.md, "Suspension"): a provider that keeps failing, or that asks
 * for a wait, is left out of searches for a while instead of being called on every one. The state
 * lives in one gateway instance (on Workers, in one isolate) and is read by the planner and written
 * by the fan-out, one verdict per attempt.
 *
 * Per provider: closed (contacted), suspended (skipped until a time), then half-open: the first
 * search planned after the end contacts it alone as a probe while every other search keeps
 * skipping it, until the probe answers (a success closes it, a failure suspends it again, longer)
 * or its claim lapses. Only failures the provider caused count; a deadline, departure, byte budget
 * or queue of our own never does.
 */
import type { AttemptRecord } from "../protocol/envelope-schema.ts";
import {
  MAX_SUSPENSION_MS,
  SUSPEND_AFTER_FAILURES,
  SUSPENSION_BASE_MS,
  SUSPENSION_PROBE_GRACE_MS,
} from "../protocol/limits.ts";
import type { ProviderSpec } from "../protocol/manifest-schema.ts";
import type { Gate } from "../io/gate.ts";

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

/** One search's attempts reporting their outcomes; the probes this search was given are its own. */
export interface AttemptWatch {
  /**
   * Records how an attempt ended. Returns text to append to the attempt's message when this
   * attempt suspended its provider, else "".
   */
  settle(spec: ProviderSpec, record: AttemptRecord, queues: Queued): string;
}

type Probe = { owner: object; expires: number; expiresWall: number };

type Breaker = {
  /** Retryable failures the provider caused since its last success. */
  failures: number;
  /** Suspensions by backoff since its last success: the n of 5 s × 2^(n-1). */
  backoffs: number;
  /** The end of the current suspension (by the injected clock), or null when closed. */
  until: number | null;
  untilWall: number;
  /** The half-open probe in flight, once the suspension ended. */
  probe: Probe | null;
};

/** How one attempt counts. */
type Verdict =
  | { kind: "success" }
  | { kind: "failure"; waitMs: number | null }
  /** Neither: caused locally, or a failure no retry fixes (the provider answered). */
  | { kind: "neutral" };

export class Suspensions {
  readonly #breakers = new Map<string, Breaker>();

  /**
   * `now` is the gateway's clock (monotonic, injectable in tests); `wallNow` turns its times into
   * the RFC 3339 `until` callers see, fixed once when a suspension starts.
   */
  constructor(
    private readonly now: () => number,
    private readonly wallNow: () => number,
  ) {}

  /** Why the planner must skip this provider now, or null when a search may contact it. */
  check(spec: ProviderSpec): SuspendedNow | null {
    const b = this.#breakers.get(spec.name);
    if (b === undefined || b.until === null) return null;
    const t = this.now();
    if (t < b.until) return { until: iso(b.untilWall), inMs: Math.ceil(b.until - t) };
    if (b.probe !== null && t < b.probe.expires) {
      return { until: iso(b.probe.expiresWall), inMs: Math.ceil(b.probe.expires - t) };
    }
    return null;
  }

  /**
   * Starts watching one admitted search: every half-open provider it contacts becomes its probe,
   * so searches planned after this one skip the provider until the probe answers. Call it in the
   * same turn as the plan, once the search holds its slot.
   */
  watch(run: readonly ProviderSpec[]): AttemptWatch {
    const owner = {};
    const t = this.now();
    for (const spec of run) {
      const b = this.#breakers.get(spec.name);
      if (b === undefined || b.until === null || t < b.until) continue;
      if (b.probe !== null && t < b.probe.expires) continue;
      const lasts = spec.timeout_seconds * 1000 + SUSPENSION_PROBE_GRACE_MS;
      b.probe = { owner, expires: t + lasts, expiresWall: this.wallNow() + lasts };
    }
    return { settle: (spec, record, queues) => this.#settle(owner, spec, record, queues) };
  }

  /** The provider's suspension as `/v1/status` reports it. */
  view(name: string): SuspensionView {
    const b = this.#breakers.get(name);
    if (b === undefined) return { state: "ready", consecutiveFailures: 0 };
    const consecutiveFailures = b.failures;
    const t = this.now();
    if (b.until !== null && t < b.until) {
      return { state: "suspended", until: iso(b.untilWall), consecutiveFailures };
    }
    if (b.until !== null && b.probe !== null && t < b.probe.expires) {
      return { state: "suspended", until: iso(b.probe.expiresWall), consecutiveFailures };
    }
    return { state: "ready", consecutiveFailures };
  }

  #settle(owner: object, spec: ProviderSpec, record: AttemptRecord, queues: Queued): string {
    const verdict = judge(record, queues);
    let b = this.#breakers.get(spec.name);
    if (b === undefined) {
      if (verdict.kind !== "failure") return "";
      b = { failures: 0, backoffs: 0, until: null, untilWall: 0, probe: null };
      this.#breakers.set(spec.name, b);
    }
    const probing = b.until !== null && b.probe?.owner === owner;
    // While suspended only the probe's answer counts: attempts sent before it began say nothing new.
    if (b.until !== null && !probing) return "";
    switch (verdict.kind) {
      case "success":
        this.#breakers.delete(spec.name);
        return "";
      case "neutral":
        // A probe that proved nothing frees its claim: the next search probes again.
        if (probing) b.probe = null;
        return "";
      case "failure": {
        b.failures++;
        const wait = verdict.waitMs ?? 0;
        if (probing || b.failures >= SUSPEND_AFTER_FAILURES) {
          b.backoffs++;
          const ms = Math.max(backoffMs(b.backoffs), wait);
          const why = probing
            ? `after its probe failed (${b.failures} consecutive failures)`
            : `after ${b.failures} consecutive failures`;
          return this.#suspend(b, ms, why);
        }
        if (wait > 0) return this.#suspend(b, wait, "as it asked");
        return "";
      }
      default: {
        const never: never = verdict;
        throw new Error(`unhandled verdict ${JSON.stringify(never)}`);
      }
    }
  }

  #suspend(b: Breaker, ms: number, why: string): string {
    b.until = this.now() + ms;
    b.untilWall = this.wallNow() + ms;
    b.probe = null;
    return `; suspended for ${seconds(ms)} ${why}`;
  }
}

/** The n-th suspension by backoff: 5 s doubled each time, at most MAX_SUSPENSION_MS. */
export function backoffMs(n: number): number {
  // Past 2^1023 the power is Infinity, which the cap still bounds.
  return Math.min(MAX_SUSPENSION_MS, SUSPENSION_BASE_MS * 2 ** Math.max(0, n - 1));
}

/**
 * How an attempt counts against its provider. Never: the caller's deadline, a caller that left,
 * the search's byte budget, time lost in our own queues (a timeout after waiting in one included).
 * A failure no retry fixes (a refusal, an answer that breaks the protocol) shows the provider
 * answering, so it neither counts nor resets.
 */
function judge(record: AttemptRecord, queues: Queued): Verdict {
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

/**
 * One of our own gates (a provider's `max_concurrency`, a search's connections) as one attempt
 * sees it: whether the attempt had to wait for a place, and whether its deadline or departure
 * caught it still waiting. Either way that time was lost to our queue, not to the provider.
 */
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

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** "5 s", "1.5 s": whole milliseconds as seconds, no trailing zeros. */
function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))} s`;
}
