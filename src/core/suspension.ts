/**
 * Provider suspension (docs/protocol.md, "Suspension"): a provider that keeps failing, or that asks
 * for a wait, is left out of searches for a while instead of being called on every one. Each
 * provider's breaker (breaker.ts) is kept by the gateway's shared state (one instance's memory, or
 * a store its instances share), read by the planner and stepped by the fan-out, one verdict per
 * attempt, and by the gateway's own probes. This file is how a search reads and reports to it.
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
  SUSPENSION_PROBE_GRACE_MS,
  SUSPENSION_PROBE_TIMEOUT_MS,
} from "../protocol/limits.ts";
import type { ProviderSpec } from "../protocol/manifest-schema.ts";
import type { Failure } from "../transport/failure.ts";
import { type Breaker, type BreakerEffect, heldUntil, type Verdict } from "./breaker.ts";

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
   * attempt suspended its provider or set off the gateway's probe of it, else "": at once when
   * nothing needs the store, else once the store has answered.
   */
  settle(spec: ProviderSpec, record: AttemptRecord, queues: Queued): string | Promise<string>;
}

/** The gateway's own probe of one provider, claimed: the only one in flight for it. */
export type ProbeClaim = {
  spec: ProviderSpec;
  /** The probe's deadline from now: within its claim, so it has ended before another may start. */
  deadlineMs(): number;
  /**
   * Records the probe's verdict; call it once, whatever happened. A promise when the record goes
   * to a shared store: the caller waits for it, so the runtime keeps the work alive until it lands.
   */
  settle(verdict: Verdict): void | Promise<void>;
};

/** Runs a claimed probe in the background; it must settle the claim, never throw. */
export type StartProbe = (claim: ProbeClaim) => void;

/** How long a claim of a provider's probe lasts: its deadline and the grace before it starts. */
export function claimMs(spec: ProviderSpec): number {
  return probeDeadlineMs(spec) + SUSPENSION_PROBE_GRACE_MS;
}

/** Why the planner must skip a provider at the moment of a read, or null. */
export function suspendedNow(read: BreakerRead, spec: ProviderSpec): SuspendedNow | null {
  const held = heldUntil(read.breaker, read, claimMs(spec));
  return held === null
    ? null
    : { until: iso(held.wall), inMs: Math.max(0, Math.ceil(held.now - read.now)) };
}

/** A provider's suspension as `/v1/status` reports it, at the moment of a read. */
export function suspensionView(read: BreakerRead, spec: ProviderSpec): SuspensionView {
  const consecutiveFailures = read.breaker?.failures ?? 0;
  const held = heldUntil(read.breaker, read, claimMs(spec));
  if (held === null) return { state: "ready", consecutiveFailures };
  return { state: "suspended", until: iso(held.wall), consecutiveFailures };
}

/** A breaker as read at one moment: by the clock it is kept by, and by the wall clock. */
export type BreakerRead = { breaker: Breaker | null; now: number; wall: number };

/** The note an attempt's message ends with when its step suspended the provider or claimed a probe. */
export function stepNote(effect: BreakerEffect): string {
  switch (effect.kind) {
    case "none":
      return "";
    case "waiting":
      return `; suspended for ${seconds(effect.ms)} as it asked`;
    case "claimed":
      return effect.confirm
        ? `; ${effect.failures} consecutive failures: the gateway probes it before suspending it`
        : "";
    default: {
      const never: never = effect;
      throw new Error(`unhandled breaker effect ${JSON.stringify(never)}`);
    }
  }
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
