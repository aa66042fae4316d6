/**
 * Runs the provider-answer property: the settings (runs, seconds, floor, seed, read from
 * TRACEFETCH_FUZZ_* variables), a crash counter for uncaught exceptions and unhandled rejections,
 * and the loop that scripts one generated answer, searches once through the caller's gateway and
 * asserts on the exchange, printing the run count and the shrunk counterexample on failure.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { fuzzAnswer } from "./fuzz-arbitraries.ts";
import { assertSearch, type Exchange } from "./fuzz-assert.ts";
import { type FuzzProviders, searchQuery } from "./fuzz-server.ts";

/** Counts uncaught exceptions and unhandled rejections: on Node, process events; elsewhere, global events. */
export function countCrashes(): { count: () => number; last: () => unknown; stop: () => void } {
  let count = 0;
  let last: unknown = null;
  const seen = (error: unknown) => {
    count++;
    last = error;
  };
  if ("Deno" in globalThis) {
    const onError = (e: Event) => {
      e.preventDefault();
      seen((e as ErrorEvent).error);
    };
    const onRejection = (e: Event) => {
      e.preventDefault();
      seen((e as PromiseRejectionEvent).reason);
    };
    globalThis.addEventListener("error", onError);
    globalThis.addEventListener("unhandledrejection", onRejection);
    return {
      count: () => count,
      last: () => last,
      stop: () => {
        globalThis.removeEventListener("error", onError);
        globalThis.removeEventListener("unhandledrejection", onRejection);
      },
    };
  }
  process.on("uncaughtException", seen);
  process.on("unhandledRejection", seen);
  return {
    count: () => count,
    last: () => last,
    stop: () => {
      process.off("uncaughtException", seen);
      process.off("unhandledRejection", seen);
    },
  };
}

/** `seconds` null: no time limit, the runs decide. */
export type FuzzSettings = { runs: number; seconds: number | null; floor: number; seed?: number };

/**
 * The defaults, unless TRACEFETCH_FUZZ_RUNS sets the runs (and lifts the time limit, unless
 * TRACEFETCH_FUZZ_SECONDS sets one); TRACEFETCH_FUZZ_SEED replays a seed.
 */
export function fuzzSettings(
  defaults: { runs: number; seconds: number; floor: number },
): FuzzSettings {
  const env = (name: string) => {
    const value = process.env[name];
    const n = value === undefined || value === "" ? NaN : Number(value);
    return Number.isInteger(n) ? n : null;
  };
  const asked = env("TRACEFETCH_FUZZ_RUNS");
  const runs = asked ?? defaults.runs;
  const seed = env("TRACEFETCH_FUZZ_SEED");
  return {
    runs,
    seconds: env("TRACEFETCH_FUZZ_SECONDS") ?? (asked === null ? defaults.seconds : null),
    // Fewer runs asked for than the floor: the floor is what was asked.
    floor: Math.min(defaults.floor, runs),
    ...(seed === null ? {} : { seed }),
  };
}

/**
 * How much longer than its time limit a suite may run to reach its floor: a machine running every
 * suite at once ran the provider fuzz at half its usual pace; a run that stalled still ends, short
 * of the floor, which the suite then reports.
 */
const TOP_UP_TIME_FACTOR = 4;

/**
 * Checks `property` until `runs` or `seconds`, whichever comes first; when the time ran out before
 * `floor` runs (a machine busy with every suite at once), goes on until the floor is reached, on
 * the next seed, for at most TOP_UP_TIME_FACTOR times the time limit: a slow machine takes longer
 * instead of failing, and a fast one still stops at the time limit. `details` are the last part's,
 * `runs` the count of both, `seeds` each part's seed (to replay with TRACEFETCH_FUZZ_SEED).
 */
export async function checkToFloor<T>(
  property: fc.IAsyncProperty<T>,
  settings: FuzzSettings,
): Promise<{ details: fc.RunDetails<T>; runs: number; seeds: string }> {
  const first = await fc.check(property, {
    numRuns: settings.runs,
    ...(settings.seconds === null
      ? {}
      : { interruptAfterTimeLimit: settings.seconds * 1_000, markInterruptAsFailure: false }),
    ...(settings.seed === undefined ? {} : { seed: settings.seed }),
  });
  if (first.failed || first.numRuns >= settings.floor) {
    return { details: first, runs: first.numRuns, seeds: String(first.seed) };
  }
  const rest = await fc.check(property, {
    numRuns: settings.floor - first.numRuns,
    seed: (first.seed + 1) | 0,
    ...(settings.seconds === null ? {} : {
      interruptAfterTimeLimit: settings.seconds * TOP_UP_TIME_FACTOR * 1_000,
      markInterruptAsFailure: false,
    }),
  });
  return {
    details: rest,
    runs: first.numRuns + rest.numRuns,
    seeds: `${first.seed} then ${rest.seed}`,
  };
}

/**
 * Searches once per generated answer until `runs` or `seconds`, whichever comes first, and at least
 * `floor` times (checkToFloor); fails on the first answer that breaks an assertion (shrunk to a
 * minimal one).
 */
export async function runProviderFuzz(options: {
  runtime: string;
  providers: FuzzProviders;
  settings: FuzzSettings;
  call: (requestId: string, query: string) => Promise<Exchange>;
}): Promise<void> {
  const { providers, settings, call } = options;
  const crashes = countCrashes();
  let next = 0;
  const started = performance.now();
  try {
    const property = fc.asyncProperty(fuzzAnswer, async (a) => {
      const id = `fz${++next}`;
      const before = crashes.count();
      const played = providers.script(id, a);
      let exchange: Exchange;
      try {
        exchange = await call(id, searchQuery(a));
      } finally {
        providers.forget(id);
      }
      // An 'error' event nobody listens to surfaces on a later tick: let it.
      await new Promise((resolve) => setTimeout(resolve, 0));
      assert.equal(
        crashes.count(),
        before,
        `an uncaught exception or unhandled rejection during this search: ${
          String(crashes.last())
        }`,
      );
      assertSearch(played, exchange, providers.hosts, options.runtime);
    });
    const { details, runs, seeds } = await checkToFloor(property, settings);
    const seconds = (performance.now() - started) / 1_000;
    console.log(
      `provider fuzz on ${options.runtime}: ${runs} runs in ${seconds.toFixed(1)} s ` +
        `(${(runs / seconds).toFixed(0)} runs/s, seed ${seeds})`,
    );
    if (details.failed) {
      const error = details.errorInstance;
      const why = error instanceof Error ? error.message : String(error);
      const report = `${fc.defaultReportMessage(details) ?? "the property failed"}\n${why}`;
      // Printed as well as thrown: a test runner that already failed the test on an uncaught
      // exception reports that exception, not this counterexample.
      console.log(report);
      throw new Error(report);
    }
    assert.ok(
      runs >= settings.floor,
      `only ${runs} runs in ${settings.seconds} s; at least ${settings.floor} are required`,
    );
  } finally {
    crashes.stop();
  }
}
