/**
 * robots.txt (RFC 9309), asked through the same judged path as the page, before the page: a page
 * it disallows is never requested. Per RFC 9309 section 2.3.1: a 4xx means no rules (allowed,
 * `unavailable`); a 5xx means complete disallow until it can be read; more than five redirects,
 * or one the policy refuses, count as unavailable. An unreachable server (DNS, connection, TLS,
 * timeout) is not asked for the page either: the fetch fails as the page's would.
 */
import robotsParserModule from "robots-parser";
import { readPrefix } from "../io/bounded-reader.ts";
import { MAX_ROBOTS_BYTES, ROBOTS_FAILURE_TTL_MS } from "../protocol/fetch-limits.ts";
import type { FetchDeps, FetchFailure, FetchPolicy } from "./fetch-types.ts";
import { followRedirects } from "./follow-redirects.ts";
import { judgeUrl } from "./judge-url.ts";
import type { RobotsAnswer } from "./robots-cache.ts";
import { abortFailure, failure } from "./send-judged.ts";

/**
 * The package is CommonJS with a default-export declaration: Node and esbuild hand the function
 * over as the default import, and Deno's type check types that import as the module, so the call
 * is typed here once, as the package declares it.
 */
const robotsParser = robotsParserModule as unknown as typeof import("robots-parser").default;

export type RobotsVerdict =
  | {
    ok: true;
    allowed: boolean;
    unavailable: boolean;
    /** The site's `Crawl-delay` for the gateway's user agent, in ms; null when it names none. */
    crawlDelayMs: number | null;
  }
  | { ok: false; outcome: FetchFailure };

const lenientUtf8 = new TextDecoder();

/** Whether robots.txt lets the gateway's user agent fetch `url` (cached per origin). */
export async function robotsVerdict(
  url: URL,
  policy: FetchPolicy,
  deps: FetchDeps,
  signal: AbortSignal,
): Promise<RobotsVerdict> {
  let answer = deps.robots.get(url.origin);
  if (answer === undefined) {
    const asked = await askRobots(url.origin, policy, deps, signal);
    if (!asked.ok) return asked;
    answer = asked.answer;
    deps.robots.set(
      url.origin,
      answer,
      answer.kind === "disallow_all" ? ROBOTS_FAILURE_TTL_MS : undefined,
    );
  }
  switch (answer.kind) {
    case "allow_all":
      return { ok: true, allowed: true, unavailable: true, crawlDelayMs: null };
    case "disallow_all":
      return { ok: true, allowed: false, unavailable: true, crawlDelayMs: null };
    case "rules": {
      const delay = answer.rules.getCrawlDelay(deps.userAgent);
      return {
        ok: true,
        allowed: answer.rules.isAllowed(url.href, deps.userAgent) ?? true,
        unavailable: false,
        crawlDelayMs: typeof delay === "number" && Number.isFinite(delay) && delay >= 0
          ? delay * 1000
          : null,
      };
    }
    default: {
      const never: never = answer;
      return never;
    }
  }
}

async function askRobots(
  origin: string,
  policy: FetchPolicy,
  deps: FetchDeps,
  signal: AbortSignal,
): Promise<{ ok: true; answer: RobotsAnswer } | { ok: false; outcome: FetchFailure }> {
  const judged = judgeUrl(`${origin}/robots.txt`, policy);
  // The page's own URL passed the same judgement; a refusal here would be a bug, read as no rules.
  if (!judged.ok) return { ok: true, answer: { kind: "allow_all", unavailable: true } };
  const headers = { "user-agent": deps.userAgent, accept: "text/plain" };
  const followed = await followRedirects(judged, policy, deps, signal, headers);
  if (signal.aborted) return { ok: false, outcome: abortFailure(signal) };
  if (!followed.ok) {
    const { outcome } = followed;
    // Unreachable (DNS, connection, TLS): the page is not fetched, and the caller learns why as a
    // retryable fetch_failed rather than a disallow it could not act on; nothing is cached. Too
    // many redirects, or one to a refused URL: unavailable.
    return outcome.outcome === "failed"
      ? { ok: false, outcome }
      : { ok: true, answer: { kind: "allow_all", unavailable: true } };
  }
  const { status, body } = followed.response;
  if (status >= 200 && status < 300) {
    try {
      const read = await readPrefix(body, MAX_ROBOTS_BYTES, signal);
      if (!read.ok) return { ok: false, outcome: abortFailure(signal) };
      const text = lenientUtf8.decode(read.bytes);
      const rules = robotsParser(`${origin}/robots.txt`, text);
      return { ok: true, answer: { kind: "rules", rules, chars: text.length } };
    } catch {
      // The connection broke while robots.txt was read: unreachable, as above.
      return {
        ok: false,
        outcome: failure(true, "unreachable", "robots.txt could not be read in full"),
      };
    }
  }
  await body?.cancel("not read").catch(() => {});
  if (status >= 400 && status < 500) {
    return { ok: true, answer: { kind: "allow_all", unavailable: true } };
  }
  return { ok: true, answer: { kind: "disallow_all", unavailable: true } };
}
