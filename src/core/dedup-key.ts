/**
 * The key under which two locators are the same page (design 5): for http(s), the host lowercased
 * without one leading `www.`, no default port, no fragment, no trailing `/`, the query kept, the
 * scheme ignored. Anything else compares exactly.
 *
 * The two kinds of key carry different prefixes, so an exact locator such as `//example.org/a`
 * can never collide with the normalised key of `https://example.org/a`.
 */
export function dedupKey(locator: string): string {
  if (!/^https?:\/\//i.test(locator)) return `exact:${locator}`;
  let url: URL;
  try {
    url = new URL(locator);
  } catch {
    return `exact:${locator}`;
  }
  const host = url.hostname.toLowerCase().replace(/^www\./, "");
  // URL empties `port` when it is the scheme's own default (80 for http:, 443 for https:); any
  // other port, such as 80 on https:, names another server and is kept.
  const port = url.port === "" ? "" : `:${url.port}`;
  const path = url.pathname.endsWith("/") ? url.pathname.slice(0, -1) : url.pathname;
  return `web://${host}${port}${path}${url.search}`;
}
