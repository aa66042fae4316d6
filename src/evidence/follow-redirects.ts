/**
 * Redirects followed by hand: each Location (relative, protocol-relative `//host`, absolute) is
 * judged from scratch, scheme, host and addresses, as if a caller had asked for it; at most
 * MAX_FETCH_REDIRECTS, and a Location already visited is a loop.
 */
import { MAX_FETCH_REDIRECTS } from "../protocol/fetch-limits.ts";
import type { FetchDeps, FetchFailure, FetchPolicy, FetchRefusal } from "./fetch-types.ts";
import { type JudgedUrl, judgeUrl } from "./judge-url.ts";
import { type Answered, sendJudged } from "./send-judged.ts";

/** The statuses that send a GET elsewhere (RFC 9110 section 15.4). */
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export type Followed =
  | { ok: true; url: URL; response: Answered }
  | { ok: false; outcome: FetchRefusal | FetchFailure };

/**
 * Follows `start` to an answer that is not a redirect. `beforeHop` runs before each request (the
 * robots.txt check) and may refuse it; nothing is sent to a URL it refuses.
 */
export async function followRedirects(
  start: Extract<JudgedUrl, { ok: true }>,
  policy: FetchPolicy,
  deps: FetchDeps,
  signal: AbortSignal,
  headers: Readonly<Record<string, string>>,
  beforeHop: (url: URL) => Promise<FetchRefusal | FetchFailure | null> = () =>
    Promise.resolve(null),
): Promise<Followed> {
  let judged = start;
  const visited = new Set([judged.url.href]);
  /** The status of the redirect that led here, null for the first request. */
  let redirectedBy: number | null = null;
  for (let redirects = 0;; redirects++) {
    const refused = await beforeHop(judged.url);
    if (refused !== null) return { ok: false, outcome: refused };
    const hop = await sendJudged(judged, policy, deps, signal, headers);
    if (!hop.ok && hop.outcome.code === "url_forbidden" && redirectedBy !== null) {
      return refuse(
        "url_forbidden",
        `a redirect (${redirectedBy}) is refused: ${hop.outcome.message}`,
      );
    }
    if (!hop.ok) return hop;
    const { response } = hop;
    const location = REDIRECTS.has(response.status) ? response.headers.get("location") : null;
    if (location === null) return { ok: true, url: hop.url, response };
    await response.body?.cancel("redirect").catch(() => {});
    if (redirects === MAX_FETCH_REDIRECTS) {
      return refuse("too_many_redirects", `more than ${MAX_FETCH_REDIRECTS} redirects`);
    }
    const next = judgeUrl(location, policy, judged.url);
    if (!next.ok) {
      return refuse("url_forbidden", `a redirect (${response.status}) is refused: ${next.message}`);
    }
    if (visited.has(next.url.href)) {
      return refuse("too_many_redirects", `a redirect loop: ${next.url.href} was visited before`);
    }
    visited.add(next.url.href);
    judged = next;
    redirectedBy = response.status;
  }
}

function refuse(code: FetchRefusal["code"], message: string): Followed {
  return { ok: false, outcome: { outcome: "refused", code, message } };
}
