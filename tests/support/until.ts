/**
 * The one bounded wait of the tests: poll a condition until it holds, and past its bound fail
 * naming what was awaited, so a condition that never comes fails the test instead of hanging it.
 */

/** How often a condition is asked: often enough for a test, rarely enough to leave the CPU alone. */
const POLL_MS = 10;

/** Resolves once `check()` holds; throws "timed out waiting for `what`" after `ms`. */
export async function until(check: () => boolean, what: string, ms = 5_000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what} (${ms} ms)`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
