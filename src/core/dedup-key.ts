/**
 * The key under which two locators are the same page (design 5): for http(s), the host lowercased
 * without one leading `www.`, no default port, no fragment, no trailing `/`, the query kept, the
 * scheme ignored. Anything else compares exactly.
 */
export function dedupKey(locator: string): string {
  if (!/^https?:\/\//i.test(locator)) return locator;
  let url: URL;
  try {
    url = new URL(locator);
  } catch {
    return locator;
  }
  const host = url.hostname.toLowerCase().replace(/^www\./, "");
  // URL drops the scheme's default port, so a port is kept only when it is not 80 or 443.
  const port = url.port === "" || url.port === "80" || url.port === "443" ? "" : `:${url.port}`;
  const path = url.pathname.endsWith("/") ? url.pathname.slice(0, -1) : url.pathname;
  return `//${host}${port}${path}${url.search}`;
}
