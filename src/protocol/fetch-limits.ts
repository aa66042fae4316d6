/**
 * The bounds of fetching one page (docs/envelope.md, "Fetching a page"; docs/security.md,
 * "Fetching pages"), each with the reason for its value.
 */

/** The most characters of markdown or text a fetch answers: a long article, far from a book. */
export const MAX_FETCH_CHARS = 200_000;

/** Characters answered when the request names none: a long article's main text, one LLM context's worth to spare. */
export const DEFAULT_FETCH_CHARS = 20_000;

/** A page's decoded body is read up to this; past it the page is cut (`truncated`), not refused. */
export const MAX_FETCH_BODY_BYTES = 5_000_000;

/** How long a fetch (robots.txt, redirects and body together) may take when the request names no timeout. */
export const DEFAULT_FETCH_TIMEOUT_MS = 10_000;

/** The longest timeout a fetch request may ask: a slow page is not worth holding a slot longer. */
export const MAX_FETCH_TIMEOUT_MS = 60_000;

/** Redirects followed at most (each one judged again): browsers allow 20; a page worth citing needs few. */
export const MAX_FETCH_REDIRECTS = 5;

/** Links an evidence bundle lists at most: enough for a page's references, bounded for a small answer. */
export const MAX_EVIDENCE_LINKS = 200;

/** A robots.txt is read up to this (RFC 9309 section 2.5: crawlers must parse at least 500 KiB). */
export const MAX_ROBOTS_BYTES = 512_000;

/** robots.txt answers kept per gateway instance, one per origin: bounded memory for many sites. */
export const ROBOTS_CACHE_ENTRIES = 1_000;

/**
 * Characters of robots.txt rules kept per instance, all origins together: 1,000 typical files of a
 * few KiB, or 16 of the largest read; parsed rules take a few times their text in memory.
 */
export const ROBOTS_CACHE_CHARS = 8_000_000;

/** How long a robots.txt answer is used (RFC 9309 section 2.4: no longer than 24 hours without reason). */
export const ROBOTS_CACHE_TTL_MS = 86_400_000;

/** Domains in `allow_domains` or `deny_domains`, and ranges in `allow_private_cidrs`: a policy, not a blocklist feed. */
export const MAX_FETCH_POLICY_ENTRIES = 1_000;

/** Addresses of one host name checked at most: a real answer has a handful; every one must pass. */
export const MAX_RESOLVED_ADDRESSES = 64;

/** A URL to fetch, or a redirect's Location, at most: browsers and CDNs cut near 8 KiB too. */
export const MAX_FETCH_URL_CHARS = 8_192;

/** An answer to a robots.txt request that failed (unreachable, 5xx) is kept this long, then asked again. */
export const ROBOTS_FAILURE_TTL_MS = 300_000;

/** One DNS query's wait before it is retried: a resolver that is slower than this is failing. */
export const DNS_TIMEOUT_MS = 2_000;

/** Tries of one DNS query: one retry covers a lost UDP packet. */
export const DNS_TRIES = 2;

/** A DNS-over-HTTPS JSON answer read at most: a name's A or AAAA records fit in a few KiB. */
export const MAX_DOH_ANSWER_BYTES = 65_536;

/**
 * Characters of a page's markup (after scripts, styles and comments are dropped) handed to the
 * extractor; the rest is cut (`truncated`). A link-dense megabyte cost linkedom and Readability 2 s
 * of CPU on a busy 2-core machine; half of that is the most one fetch may cost, since the fetch's
 * timeout cannot stop synchronous work. An article's own markup is far smaller.
 */
export const MAX_EXTRACT_HTML_CHARS = 500_000;

/**
 * Element nesting the extractor accepts; deeper markup is read as plain text instead. linkedom's
 * parser slows down with depth (50,000 nested elements took 8 s) and the DOM walkers recurse (10,000
 * overflowed the stack); a real article nests a few dozen deep.
 */
export const MAX_EXTRACT_DEPTH = 256;
