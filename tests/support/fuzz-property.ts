/**
 * The runner the route fuzz suites share (tests/action-request-fuzz.test.ts,
 * tests/action-answer-fuzz.test.ts, tests/mcp-fuzz.test.ts): one generated value per run through a
 * check that throws on a broken invariant, until the runs or the seconds of `fuzzSettings` are
 * spent (TRACEFETCH_FUZZ_RUNS, TRACEFETCH_FUZZ_SECONDS, TRACEFETCH_FUZZ_SEED, as
 * tests/support/fuzz-run.ts reads them). An uncaught exception or unhandled rejection during a run
 * fails that run; a run that does not end within HUNG_RUN_MS fails too. It prints the run count and
 * the seed, and on failure the shrunk counterexample.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { checkToFloor, countCrashes, type FuzzSettings } from "./fuzz-run.ts";

/** A run (one request to the gateway and its checks) that takes longer than this is hung. */
export const HUNG_RUN_MS = 15_000;

/** Throws when `work` does not settle within `ms`: a hung request is a failure, not a stuck suite. */
export async function within<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

export async function runFuzz<T>(options: {
  /** What the log line and the failure say the suite is. */
  name: string;
  arbitrary: fc.Arbitrary<T>;
  settings: FuzzSettings;
  /** One run: `id` is unique to the run (an x-request-id the providers see). */
  check: (value: T, id: string) => Promise<void>;
}): Promise<{ runs: number; seconds: number }> {
  const { settings } = options;
  const crashes = countCrashes();
  let next = 0;
  const started = performance.now();
  try {
    const property = fc.asyncProperty(options.arbitrary, async (value) => {
      const id = `fz-${++next}`;
      const before = crashes.count();
      await within(HUNG_RUN_MS, `run ${id}`, options.check(value, id));
      // An 'error' event nobody listens to surfaces on a later tick: let it.
      await new Promise((resolve) => setTimeout(resolve, 0));
      assert.equal(
        crashes.count(),
        before,
        `an uncaught exception or unhandled rejection during this run: ${String(crashes.last())}`,
      );
    });
    const { details, runs, seeds } = await checkToFloor(property, settings);
    const seconds = (performance.now() - started) / 1_000;
    console.log(
      `${options.name}: ${runs} runs in ${seconds.toFixed(1)} s ` +
        `(${(runs / seconds).toFixed(0)} runs/s, seed ${seeds})`,
    );
    if (details.failed) {
      const error = details.errorInstance;
      const why = error instanceof Error ? error.message : String(error);
      const report = `${options.name}: ${
        fc.defaultReportMessage(details) ?? "the property failed"
      }\n${why}`;
      // Printed as well as thrown: a runner that already failed the test on an uncaught exception
      // reports that exception, not this counterexample.
      console.log(report);
      throw new Error(report);
    }
    assert.ok(
      runs >= settings.floor,
      `${options.name}: only ${runs} runs in ${settings.seconds} s; at least ${settings.floor} are required`,
    );
    return { runs, seconds };
  } finally {
    crashes.stop();
  }
}
