/**
 * Work an admitted search starts in the background, such as the gateway's suspension probe, before
 * its route has handed over a way to run such work (`RunOptions.later`: `waitUntil` on Workers). It
 * waits for that hand-over, then runs through it; a run without one (the CLI's own search) starts it as a
 * plain promise. No error of the work escapes.
 */
import type { AdmittedSearch, RunOptions } from "./search-run.ts";

type Later = NonNullable<RunOptions["later"]>;
type Work = () => Promise<void>;

export class Background {
  /** How work runs once the route said so: through `later`, as a plain promise (null), or unknown. */
  #later: Later | null | undefined = undefined;
  readonly #waiting: Work[] = [];

  /** Runs `work` in the background of this search; the search never waits for it. */
  run(work: Work): void {
    if (this.#later === undefined) this.#waiting.push(work);
    else start(this.#later, work);
  }

  /** The search as its route runs it: its first run hands over the route's `later`. */
  around(search: AdmittedSearch): AdmittedSearch {
    return {
      run: (options, deliver) => {
        this.#hand(options.later ?? null);
        return search.run(options, deliver);
      },
    };
  }

  #hand(later: Later | null): void {
    if (this.#later !== undefined) return;
    this.#later = later;
    for (const work of this.#waiting.splice(0)) start(later, work);
  }
}

function start(later: Later | null, work: Work): void {
  const guarded = () => work().catch(() => {});
  if (later === null) void guarded();
  else later(guarded);
}
