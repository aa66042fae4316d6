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
  if (PLAIN_WEB_LOCATOR.test(locator)) {
    const key = plainKey(locator);
    if (key !== null) return key;
  }
  return keyByUrl(locator);
}

/**
 * The key as the URL parser reads an http(s) locator: the rule itself, which dedupKey's reading by
 * position must always agree with (tests/dedup-key-property.test.ts holds the two together).
 */
export function keyByUrl(locator: string): string {
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
 * An http(s) locator the URL parser would leave as it is but for the host's case and a default
 * port: letters, digits and hyphens in dot-separated host labels that each start with a letter
 * (so never an IP address, whose numbers the parser rewrites) and are not `xn--` (punycode, which
 * it checks); a port of digits; a path and a query of characters it never encodes, with no `.`
 * right after a `/` (a dot segment it would resolve), no `%` (`%2e` counts as a dot), and no
 * fragment. dedupKey reads such a locator with this pattern, sparing a URL per candidate of every
 * answer; any other goes through URL. tests/dedup-key-property.test.ts checks both agree.
 */
const PLAIN_WEB_LOCATOR =
  /^https?:\/\/(?!xn--)[a-z][a-z0-9-]*(?:\.(?!xn--)[a-z][a-z0-9-]*)*(?::[0-9]{1,5})?(?:\/(?!\.)[A-Za-z0-9\-._~!$&()*+,;=:@]*)*(?:\?[A-Za-z0-9\-._~!$&()*+,;=:@/?]+)?$/i;

const COLON = 0x3a;
const SLASH = 0x2f;
const QUESTION = 0x3f;

/**
 * The key of a locator PLAIN_WEB_LOCATOR accepted, read by position rather than by a match's
 * groups (one array and five strings per candidate), or null for a port the URL parser refuses.
 */
function plainKey(locator: string): string | null {
  const https = locator.charCodeAt(4) !== COLON;
  const hostStart = https ? 8 : 7;
  let at = hostStart;
  const end = locator.length;
  for (; at < end; at++) {
    const c = locator.charCodeAt(at);
    if (c === COLON || c === SLASH || c === QUESTION) break;
  }
  const lower = locator.slice(hostStart, at).toLowerCase();
  const host = lower.startsWith("www.") ? lower.slice(4) : lower;
  let port = "";
  if (locator.charCodeAt(at) === COLON) {
    const from = at + 1;
    for (at = from; at < end; at++) {
      const c = locator.charCodeAt(at);
      if (c === SLASH || c === QUESTION) break;
    }
    const number = Number(locator.slice(from, at));
    if (number > MAX_PORT) return null;
    if (number !== (https ? 443 : 80)) port = `:${number}`;
  }
  const queryAt = locator.indexOf("?", at);
  const pathEnd = queryAt < 0 ? end : queryAt;
  // No trailing `/` (a bare `/` is no path at all); the query is kept.
  const path = locator.charCodeAt(pathEnd - 1) === SLASH && pathEnd > at
    ? locator.slice(at, pathEnd - 1)
    : locator.slice(at, pathEnd);
  return `web://${host}${port}${path}${queryAt < 0 ? "" : locator.slice(queryAt)}`;
}

/** The largest TCP port; the URL parser refuses a larger one. */
const MAX_PORT = 65_535;

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
