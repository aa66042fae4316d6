/**
 * Provider suspension over the gateway's shared state (docs/protocol.md, "Suspension"): reads of
 * the providers' breakers for the planner, one step per attempt that can change a breaker, and the
 * claims of the gateway's own probes. With the memory adapter every step is taken in the same
 * turn; with a shared store, only a failure (or a success against a breaker that remembers
 * failures) costs a round trip, and a search never waits for a probe.
 */
import type { AttemptRecord } from "../protocol/envelope-schema.ts";
import type { ProviderSpec } from "../protocol/manifest-schema.ts";
import type { BreakerEffect, BreakerEvent } from "../core/breaker.ts";
import {
  type AttemptWatch,
  type BreakerRead,
  claimMs,
  judge,
  type ProbeClaim,
  probeDeadlineMs,
  type Queued,
  type StartProbe,
  stepNote,
  type SuspendedNow,
  suspendedNow,
  type SuspensionView,
  suspensionView,
} from "../core/suspension.ts";
import type { SharedState } from "../state/shared-state.ts";

/** The breakers a plan was made with, by provider name. */
export type BreakerReads = Map<string, BreakerRead>;

export class Suspensions {
  constructor(
    private readonly state: SharedState,
    /** A monotonic clock of this instance, for how long a probe's claim has left. */
    private readonly now: () => number,
  ) {}

  /**
   * The breakers of these providers, for one plan: at once when the state has them fresh; a store
   * is waited for at most `budgetMs`, what is left of the search.
   */
  read(specs: readonly ProviderSpec[], budgetMs?: number): BreakerReads | Promise<BreakerReads> {
    return this.state.breakers(specs.map((s) => s.name), budgetMs);
  }

  /** Whether the planner skips a provider, by the reads the plan was made with. */
  static check(reads: BreakerReads, spec: ProviderSpec): SuspendedNow | null {
    const read = reads.get(spec.name);
    return read === undefined ? null : suspendedNow(read, spec);
  }

  /**
   * Starts watching one admitted search: every provider among `skipped` whose suspension has
   * ended gets the gateway's probe now, unless one is out; the search's own failures may claim
   * one later. Probes run through `start`, never in the search's way.
   */
  watch(skipped: readonly ProviderSpec[], reads: BreakerReads, start: StartProbe): AttemptWatch {
    for (const spec of skipped) void this.#step(spec, { kind: "resume" }, start);
    return {
      settle: (spec, record, queues) => this.#settle(spec, record, queues, reads, start),
    };
  }

  /** A provider's suspension as `/v1/status` reports it. */
  async view(spec: ProviderSpec): Promise<SuspensionView> {
    const reads = await this.state.breakers([spec.name]);
    const read = reads.get(spec.name);
    return read === undefined
      ? { state: "ready", consecutiveFailures: 0 }
      : suspensionView(read, spec);
  }

  #settle(
    spec: ProviderSpec,
    record: AttemptRecord,
    queues: Queued,
    reads: BreakerReads,
    start: StartProbe,
  ): string | Promise<string> {
    const verdict = judge(record, queues);
    if (verdict.kind === "neutral") return "";
    // A success against a breaker that remembered nothing when the plan was made changes nothing
    // worth a round trip to a shared store: should another instance have counted failures since,
    // their probe will find the provider answering.
    const remembered = (reads.get(spec.name)?.breaker ?? null) !== null;
    if (verdict.kind === "success" && !remembered && this.state.backend !== "memory") {
      return "";
    }
    return this.#step(spec, { kind: "attempt", verdict }, start);
  }

  /** One step; a claim it makes starts the probe. The note for the attempt's message. */
  #step(spec: ProviderSpec, event: BreakerEvent, start: StartProbe): string | Promise<string> {
    const effect = this.state.stepBreaker(spec.name, event, claimMs(spec));
    // In memory the step is taken in this turn, and the fan-out takes its note as it comes (with
    // no closure made for a store's answer).
    return effect instanceof Promise
      ? effect.then((stepped) => this.#taken(spec, stepped, start))
      : this.#taken(spec, effect, start);
  }

  /** A step's effect: a claim starts the probe. The note for the attempt's message. */
  #taken(spec: ProviderSpec, effect: BreakerEffect, start: StartProbe): string {
    if (effect.kind === "claimed") start(this.#claim(spec, effect));
    return stepNote(effect);
  }

  #claim(
    spec: ProviderSpec,
    effect: Extract<BreakerEffect, { kind: "claimed" }>,
  ): ProbeClaim {
    // Counted on this instance's own clock from the claim, so a store's clock never matters here.
    const claimedAt = this.now();
    const lasts = claimMs(spec);
    return {
      spec,
      deadlineMs: () =>
        Math.max(0, Math.min(probeDeadlineMs(spec), lasts - (this.now() - claimedAt))),
      settle: (verdict) => {
        const event: BreakerEvent = {
          kind: "probed",
          epoch: effect.epoch,
          probeUntil: effect.probeUntil,
          verdict,
        };
        const stepped = this.state.stepBreaker(spec.name, event, lasts);
        if (stepped instanceof Promise) return stepped.then(() => {});
      },
    };
  }
}
