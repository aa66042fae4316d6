/**
 * The one rule for a URL the gateway or a provider may call: a manifest endpoint, a JWKS URL, a
 * built-in's or an example provider's base URL, a provider under conformance.
 */

/**
 * Why `raw` may not be called, or null when it may: an absolute https: URL, or http: on a loopback
 * host when `allowLoopback`; no credentials (they would travel in every request and every log) and
 * no fragment (HTTP drops it silently). A `base` URL, which paths and parameters are appended to,
 * may not carry a query either.
 */
export function endpointProblem(
  raw: string,
  allowLoopback: boolean,
  kind: "endpoint" | "base" = "endpoint",
): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "must be an absolute URL";
  }
  if (url.username !== "" || url.password !== "") {
    return "must not carry credentials; use auth.secret to name a binding";
  }
  if (url.hash !== "") return "must not carry a fragment";
  if (url.protocol !== "https:" && url.protocol !== "http:") return "must use https:";
  if (url.protocol === "http:" && !isLoopbackHost(url.hostname)) {
    return "must use https: (http: is allowed only on loopback)";
  }
  if (url.protocol === "http:" && !allowLoopback) {
    return "is an http: loopback endpoint; set TRACEFETCH_ALLOW_LOOPBACK=1 to allow it";
  }
  if (kind === "base" && url.search !== "") return "must not carry a query";
  return null;
}

/** `localhost`, 127.0.0.0/8 or [::1]: the only hosts plain http may reach. */
export function isLoopbackHost(hostname: string): boolean {
  if (hostname === "localhost" || hostname === "[::1]") return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}
