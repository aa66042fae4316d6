/**
 * The bounds of a crawl (`POST /v1/crawl`, docs/envelope.md, "Crawling a site"; docs/security.md,
 * "Crawling"), each with the reason for its value. Every page of a crawl is a fetch, under the
 * bounds of fetch-limits.ts.
 */

/** Pages one crawl fetches at most: a small site's section, not a mirror of it. */
export const MAX_CRAWL_PAGES = 50;

/** Pages fetched when the request names no `max_pages`: a page and the pages it leads to. */
export const DEFAULT_CRAWL_PAGES = 10;

/** Links followed from the first page at most (`max_depth`): three clicks reach most of a section. */
export const MAX_CRAWL_DEPTH = 3;

/** Links followed when the request names no `max_depth`: the first page and what it links to. */
export const DEFAULT_CRAWL_DEPTH = 1;

/**
 * Requests to the crawled origin in flight at once: two, what RFC 2616 once asked of a browser
 * per server, so that one crawl never weighs on a site like a crowd.
 */
export const MAX_CRAWL_IN_FLIGHT = 2;

/**
 * The wait between the starts of two requests to the crawled origin when its robots.txt names no
 * `Crawl-delay`: at most four pages a second, a person clicking quickly.
 */
export const DEFAULT_CRAWL_DELAY_MS = 250;

/**
 * The longest `Crawl-delay` a crawl honours; a site asking more is waited on this long: a crawl of
 * MAX_CRAWL_PAGES then takes about four minutes, near MAX_CRAWL_DURATION_MS, which ends it.
 */
export const MAX_CRAWL_DELAY_MS = 5_000;

/**
 * How long one crawl runs at most, its last page's fetch included: a caller that wants more of a
 * site asks again; a stream held open longer holds the gateway's slots for one caller.
 */
export const MAX_CRAWL_DURATION_MS = 180_000;

/**
 * `skipped` events one crawl sends at most: 50 pages of 200 links each could name 10,000; past
 * this the `done` event's counts still hold every skip.
 */
export const MAX_CRAWL_SKIPPED_EVENTS = 500;
