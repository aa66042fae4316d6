/**
 * One search as the gateway runs it, for the HTTP routes (plain and streamed) and the CLI's
 * in-process search alike: admitted (planned, then given an in-flight slot), run, and answered
 * with the envelope of docs/envelope.md.
 */
import type { Envelope, Mining } from "../protocol/envelope-schema.ts";
import { OVERLOADED_RETRY_AFTER_MS } from "../protocol/limits.ts";
import type { RequestProblem, SearchRequest } from "../protocol/search-request.ts";
import type { SearchHooks } from "../core/search.ts";
import type { CompletedSearch } from "../protocol/envelope-schema.ts";
import { MINING_DISABLED, problemEnvelope } from "../envelope/build-envelope.ts";
import { searchEnvelope } from "../envelope/search-envelope.ts";
import type { CallerAsk } from "./caller-limits.ts";
import type { Flight } from "./flight.ts";
import type { MiningGate } from "./mining/mining-gate.ts";
import type { RequestTrace } from "../core/telemetry.ts";

/** A read and validated search request, who asks, and the request's trace when traced. */
export type SearchAsk = CallerAsk & { request: SearchRequest; trace?: RequestTrace | undefined };

/** Refused (the plan's problem, or overloaded) before any provider is contacted, or admitted. */
export type Admission = { ok: false; envelope: Envelope } | { ok: true; search: AdmittedSearch };

export type RunOptions = SearchHooks & {
  /** Fires when the caller goes away: every attempt is cancelled. */
  signal: AbortSignal;
  /**
   * Runs work once the answer was handed over, never awaited by the answer (a later turn on Node
   * and Deno, `waitUntil` on Workers); without it, the search's trace is not recorded.
   */
  later?: ((work: () => Promise<void>) => void) | undefined;
};

/** What a run produced: the search, the envelope a plain answer carries, and its mining block. */
export type SearchRun = { completed: CompletedSearch; envelope: Envelope; mining: Mining };

/** A search holding an in-flight slot. */
export type AdmittedSearch = {
  /**
   * Runs the search, then `deliver`s its answer, and gives the slot back once that is done (a
   * streamed search holds its slot until its last event is written), however either ends.
   */
  run<T>(options: RunOptions, deliver: (run: SearchRun) => T | Promise<T>): Promise<T>;
};

/**
 * One caller's search, counted in on `flight` (its own or one it joined): its answer carries its
 * own request id and view. Only the caller that started the fan-out holds an in-flight slot,
 * which `release` gives back.
 */
export function admitted(
  flight: Flight,
  ask: SearchAsk,
  coalesced: boolean,
  release: (() => void) | null,
  mining: MiningGate | null,
  /** Counts this caller out of `flight`; by default it is counted in now. */
  leave: () => void = flight.join(),
): AdmittedSearch {
  return {
    async run(options, deliver) {
      try {
        const completed = await flight.follow(options, coalesced, leave);
        const block = mining?.block() ?? MINING_DISABLED;
        const envelope = searchEnvelope(completed, ask.requestId, ask.request.view, block);
        const answer = await deliver({ completed, envelope, mining: block });
        if (mining !== null && block.recorded && options.later) {
          const { request, caller, requestId } = ask;
          const answeredAt = Date.now();
          options.later(() => mining.record({ completed, request, caller, requestId, answeredAt }));
        }
        return answer;
      } finally {
        leave();
        release?.();
      }
    },
  };
}

/** The planner's refusal: an ordinary 4xx that contacted nobody. */
export function refused(problem: RequestProblem, requestId: string): Admission {
  const { code, message, field } = problem;
  return { ok: false, envelope: problemEnvelope("search", code, requestId, message, field) };
}

/** Every search slot of this instance is held: the search is shed with 429 `overloaded`. */
export function atLimit(requestId: string): Admission {
  return {
    ok: false,
    envelope: overloaded(requestId, "the gateway is at its limit of searches in flight"),
  };
}

/** Every slot is taken: the caller is shed with 429 and told when to come back. */
export function overloaded(requestId: string, what: string): Envelope {
  return problemEnvelope("search", "overloaded", requestId, what, undefined, {
    retry_after_ms: OVERLOADED_RETRY_AFTER_MS,
  });
}
