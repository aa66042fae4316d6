/**
 * A bounded crawl of one origin (docs/envelope.md, "Crawling a site"): from a first page, breadth
 * first, the links of each page fetched to `max_depth`, until `max_pages` requests were made. The
 * fetch of one page is handed in (the route's, under every rule of `POST /v1/fetch`); this file
 * decides only which URL is asked next, and when.
 *
 * Invariants:
 * - Only the first page's origin is asked (the origin its redirects led to, when they did); every
 *   other URL is a `skipped` event, never a request.
 * - robots.txt is asked before each page; a page it disallows is never requested.
 * - At most MAX_CRAWL_IN_FLIGHT pages of the origin are in flight (the route's visit also shares
 *   those places with the instance's other crawls of the origin), and two requests of the crawl
 *   start at least the site's Crawl-delay apart (DEFAULT_CRAWL_DELAY_MS when it names none, at
 *   most MAX_CRAWL_DELAY_MS).
 * - At most `max_pages` pages are requested; once the signal aborts, no page is started and every
 *   wait ends.
 */
import {
  DEFAULT_CRAWL_DELAY_MS,
  MAX_CRAWL_DELAY_MS,
  MAX_CRAWL_IN_FLIGHT,
  MAX_CRAWL_SKIPPED_EVENTS,
} from "../protocol/crawl-limits.ts";
import type {
  CrawlCounts,
  CrawlEnding,
  CrawlSkipped,
  CrawlSkipReason,
} from "../protocol/crawl-event-schema.ts";
import type { EnvelopeCode } from "../protocol/codes.ts";
import type { FetchResult } from "../protocol/evidence-schema.ts";
import type { RobotsVerdict } from "./robots-check.ts";

/** What one page's fetch came to. */
export type PageVisit =
  | { kind: "page"; result: FetchResult }
  /** Fetched or asked, and not a page: refused by the fetch rules, failed, or not a page's type. */
  | { kind: "failed"; code: EnvelopeCode; message: string }
  /** Not admitted (caller limits, in-flight slots): the crawl ends. */
  | { kind: "refused"; code: EnvelopeCode; message: string };

export type CrawlHooks = {
  /** robots.txt's word on a URL (cached per origin by the caller). */
  robots: (url: URL, signal: AbortSignal) => Promise<RobotsVerdict>;
  /** Fetches one page, as `POST /v1/fetch` would. */
  visit: (url: string, signal: AbortSignal) => Promise<PageVisit>;
  /** A page fetched: its event. */
  page: (url: string, depth: number, result: FetchResult) => void;
  /** A URL not fetched: its event (at most MAX_CRAWL_SKIPPED_EVENTS are handed over). */
  skipped: (skip: Omit<CrawlSkipped, "event" | "request_id">) => void;
  /** Waits `ms`, or less when the signal aborts. */
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  now: () => number;
};

export type CrawlPlan = { url: URL; maxPages: number; maxDepth: number };

export type CrawlEnd = CrawlCounts & {
  ended: CrawlEnding;
  code: EnvelopeCode;
  message?: string;
};

/**
 * Paths whose last segment ends in one of these are not pages a fetch reads: skipped as `type`
 * without a request. A page that says another type once fetched is skipped as `type` too.
 */
const NOT_PAGES =
  /\.(?:7z|avi|bin|bmp|css|dmg|docx?|eot|exe|gif|gz|ico|iso|jpe?g|js|json|mov|mp3|mp4|ogg|otf|pdf|png|pptx?|rar|svg|tar|tgz|tiff?|ttf|wasm|wav|webm|webp|woff2?|xlsx?|xml|zip)$/i;

/** Crawls `plan.url`'s origin; resolves once nothing is in flight. */
export async function crawlSite(
  plan: CrawlPlan,
  hooks: CrawlHooks,
  signal: AbortSignal,
): Promise<CrawlEnd> {
  const counts: CrawlCounts = {
    pages: 0,
    skipped: { robots: 0, other_origin: 0, type: 0, limit: 0, failed: 0 },
  };
  let events = 0;
  const skip = (
    url: string,
    depth: number,
    reason: CrawlSkipReason,
    more: Partial<CrawlSkipped> = {},
  ) => {
    counts.skipped[reason] += 1;
    if (events++ < MAX_CRAWL_SKIPPED_EVENTS) hooks.skipped({ url, depth, reason, ...more });
  };
  let origin = plan.url.origin;
  const start = withoutFragment(plan.url);
  const queue: Array<{ url: string; depth: number }> = [{ url: start, depth: 0 }];
  const seen = new Set([start]);
  const running = new Set<Promise<void>>();
  let started = 0;
  let nextStartAt = 0;
  let refusal: { code: EnvelopeCode; message: string } | null = null;

  /** A link of a page at `depth`: queued, or skipped with its reason. */
  const found = (href: string, depth: number) => {
    let url: URL;
    try {
      url = new URL(href);
    } catch {
      return;
    }
    const key = withoutFragment(url);
    if (seen.has(key)) return;
    seen.add(key);
    if (url.origin !== origin) return skip(key, depth, "other_origin");
    if (NOT_PAGES.test(url.pathname)) return skip(key, depth, "type");
    if (depth > plan.maxDepth) return skip(key, depth, "limit", { limit: "max_depth" });
    queue.push({ url: key, depth });
  };

  const visitOne = async (url: string, depth: number) => {
    const visit = await hooks.visit(url, signal);
    if (signal.aborted) return;
    switch (visit.kind) {
      case "page": {
        const final = new URL(visit.result.evidence.final_url);
        // The first page may move the crawl to the origin its redirects led to.
        if (depth === 0) origin = final.origin;
        if (final.origin !== origin) return skip(url, depth, "other_origin");
        seen.add(withoutFragment(final));
        counts.pages += 1;
        hooks.page(url, depth, visit.result);
        for (const link of visit.result.evidence.links) found(link.url, depth + 1);
        return;
      }
      case "failed":
        return skip(url, depth, visit.code === "unsupported_content_type" ? "type" : "failed", {
          code: visit.code,
          message: visit.message,
        });
      case "refused":
        refusal ??= { code: visit.code, message: visit.message };
        return;
      default: {
        const never: never = visit;
        throw new Error(`unhandled visit ${JSON.stringify(never)}`);
      }
    }
  };

  while (!signal.aborted && refusal === null) {
    const next = started < plan.maxPages && running.size < MAX_CRAWL_IN_FLIGHT
      ? queue.shift()
      : undefined;
    if (next === undefined) {
      if (running.size === 0) break;
      await Promise.race(running);
      continue;
    }
    const target = new URL(next.url);
    const robots = await hooks.robots(target, signal);
    if (signal.aborted) break;
    if (!robots.ok) {
      skip(next.url, next.depth, "failed", {
        code: "fetch_failed",
        message: robots.outcome.message,
      });
      continue;
    }
    if (!robots.allowed) {
      skip(next.url, next.depth, "robots");
      continue;
    }
    const delay = robots.crawlDelayMs === null
      ? DEFAULT_CRAWL_DELAY_MS
      : Math.min(robots.crawlDelayMs, MAX_CRAWL_DELAY_MS);
    const wait = nextStartAt - hooks.now();
    if (wait > 0) await hooks.sleep(wait, signal);
    if (signal.aborted) break;
    nextStartAt = hooks.now() + delay;
    started += 1;
    const run: Promise<void> = visitOne(next.url, next.depth).finally(() => running.delete(run));
    running.add(run);
  }
  await Promise.allSettled(running);
  const left = queue.length;
  for (const { url, depth } of queue.splice(0)) skip(url, depth, "limit", { limit: "max_pages" });
  if (refusal !== null) {
    const { code, message } = refusal;
    return { ...counts, ended: "refused", code, message };
  }
  if (signal.aborted) return { ...counts, ended: "deadline", code: "ok" };
  return { ...counts, ended: left > 0 ? "max_pages" : "complete", code: "ok" };
}

function withoutFragment(url: URL): string {
  const copy = new URL(url);
  copy.hash = "";
  return copy.href;
}
