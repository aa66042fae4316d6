/**
 * One fetch, start to end: judge the URL, check robots.txt, follow redirects one judged hop at a
 * time, read the body under its caps, and make the evidence.
 */
import type { FetchDeps, FetchOutcome, FetchPolicy, FetchRequest } from "./fetch-types.ts";

/**
 * Fetches one page under the policy (null: fetching is off, `fetch_disabled`). Never throws for
 * anything a page, a resolver or a network does; every such case is an outcome.
 */
export function fetchEvidence(
  request: FetchRequest,
  policy: FetchPolicy | null,
  deps: FetchDeps,
): Promise<FetchOutcome> {
  if (policy === null) {
    return Promise.resolve({
      outcome: "refused",
      code: "fetch_disabled",
      message: "this gateway does not fetch pages (its manifest has no fetch block)",
    });
  }
  void request;
  void deps;
  return Promise.resolve({
    outcome: "failed",
    code: "fetch_failed",
    reason: "failed",
    status_code: null,
    retryable: false,
    message: "fetching pages is not built yet",
  });
}
