/**
 * The user agent a fetch sends, and the product token robots.txt groups are matched on (RFC 9309
 * section 2.2.1: letters, `-` and `_` only).
 */

/** The token a site's robots.txt names to address the gateway. */
export const ROBOTS_PRODUCT_TOKEN = "TraceFetch-Edge";

/** `TraceFetch-Edge/<version>`: the product token first, as crawlers write theirs. */
export function fetchUserAgent(version: string): string {
  return `${ROBOTS_PRODUCT_TOKEN}/${version}`;
}
