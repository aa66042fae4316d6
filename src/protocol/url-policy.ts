/**
 * The one rule for a URL this project calls: a manifest endpoint, a JWKS URL, a built-in's or an
 * example provider's base URL, a provider under conformance, and the gateway the CLI talks to.
 */

/**
 * What a URL is for:
 * - `endpoint`: called as it is (a manifest endpoint, a JWKS URL, a provider under conformance);
 * - `base`: paths and parameters are appended to it (a built-in's or an example provider's base
 *   URL), so it may not carry a query;
 * - `gateway`: the gateway the CLI calls, also a base. Plain http may reach any host, since the CLI
 *   can call a gateway anonymously; its token goes only where `keepsSecretsInTransit` holds.
 */
export type UrlUse = "endpoint" | "base" | "gateway";

/**
 * Why `raw` may not be called, or null when it may: an absolute https: URL, or http: on a loopback
 * host when `allowLoopback` (on any host for a `gateway`); no credentials (they would travel in
 * every request and every log) and no fragment (HTTP drops it silently). A `base` or `gateway` URL
 * may not carry a query either.
 */
export function endpointProblem(
  raw: string,
  allowLoopback: boolean,
  kind: UrlUse = "endpoint",
): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "must be an absolute URL";
  }
  if (url.username !== "" || url.password !== "") {
    return kind === "gateway"
      ? "must not carry credentials; use a token variable"
      : "must not carry credentials; use auth.secret to name a binding";
  }
  if (url.hash !== "") return "must not carry a fragment";
  if (kind === "gateway") {
    if (url.protocol !== "https:" && url.protocol !== "http:") return "must use https: or http:";
    return url.search === "" ? null : "must not carry a query";
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return "must use https:";
  if (!keepsSecretsInTransit(url)) return "must use https: (http: is allowed only on loopback)";
  if (url.protocol === "http:" && !allowLoopback) {
    return "is an http: loopback endpoint; set TRACEFETCH_ALLOW_LOOPBACK=1 to allow it";
  }
  if (kind === "base" && url.search !== "") return "must not carry a query";
  return null;
}

/**
 * Whether what is sent to `url` (a token, a query) stays off the network in clear: https:, or
 * http: to a loopback host, which never leaves the machine.
 */
export function keepsSecretsInTransit(url: URL): boolean {
  return url.protocol === "https:" || (url.protocol === "http:" && isLoopbackHost(url.hostname));
}

/** `localhost`, 127.0.0.0/8 or [::1]: the only hosts plain http may reach. */
export function isLoopbackHost(hostname: string): boolean {
  if (hostname === "localhost" || hostname === "[::1]") return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}
