/**
 * The key under which two locators are the same page (docs/decisions.md, "Fusion"): for http(s),
 * the host lowercased without one leading `www.`, no default port, no fragment, no trailing `/`,
 * the query kept, the scheme ignored. Anything else compares exactly.
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

/**
 * The locator a merged entry shows: the appearance as its provider sent it, with only the host
 * lowercased and a default port (80 for http:, 443 for https:) removed, so
 * `https://Developer.MOZILLA.org:443/en-US/docs/Web` shows as
 * `https://developer.mozilla.org/en-US/docs/Web`. The scheme, any user information, the path, the
 * query and the fragment stay exactly as sent; anything that is not a plain http(s) URL is shown
 * as it is.
 */
export function shownLocator(locator: string): string {
  const parts = /^(https?:\/\/)([^/?#\\]*)(.*)$/is.exec(locator);
  if (parts === null) return locator;
  const [, scheme, authority, rest] = parts as unknown as [string, string, string, string];
  const at = authority.lastIndexOf("@");
  const user = authority.slice(0, at + 1);
  const hostPort = authority.slice(at + 1);
  // An IPv6 literal's colons are inside its brackets; the port, if any, follows them.
  const portAt = hostPort.startsWith("[") ? hostPort.indexOf("]") + 1 : hostPort.lastIndexOf(":");
  const host = portAt > 0 && portAt < hostPort.length ? hostPort.slice(0, portAt) : hostPort;
  const port = hostPort.slice(host.length);
  if (port === "") return `${scheme}${user}${host.toLowerCase()}${rest}`;
  if (!/^:\d*$/.test(port)) return locator;
  let url: URL;
  try {
    url = new URL(locator);
  } catch {
    return locator;
  }
  // URL empties `port` exactly when it is the scheme's default (or not written).
  const keptPort = url.port === "" ? "" : port;
  return `${scheme}${user}${host.toLowerCase()}${keptPort}${rest}`;
}
