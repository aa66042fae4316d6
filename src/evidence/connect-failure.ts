/**
 * connectFailure: the one place an error thrown by a runtime's client (undici on Node and Deno,
 * workerd's fetch) becomes a connector's failure. undici reports `TypeError("fetch failed")` with
 * a `cause` carrying a system or `UND_ERR_*` code; workerd reports plain errors with a message.
 * Messages never carry the runtime's text: it may name the address that was pinned.
 */
import type { Connected } from "./fetch-types.ts";

type ConnectFailure = Extract<Connected, { ok: false }>;

const UNREACHABLE = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "EPIPE",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
]);
const TLS =
  /^(ERR_TLS_|ERR_SSL_|CERT_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_(GET|VERIFY)_)/;
const DEADLINES = new Set(["UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"]);

/** Causes followed at most: a cycle of causes must not hang the classifier. */
const MAX_CAUSE_DEPTH = 5;

/** Maps what a client threw; `signal` is the request's, so an abort is told from a failure. */
export function connectFailure(error: unknown, signal: AbortSignal): ConnectFailure {
  if (signal.aborted) {
    const timeout = (signal.reason as Error | undefined)?.name === "TimeoutError";
    return timeout
      ? {
        ok: false,
        reason: "timeout",
        message: "the page did not answer before the fetch's timeout",
      }
      : { ok: false, reason: "cancelled", message: "the fetch was cancelled" };
  }
  const code = errorCode(error);
  if (code !== null && DEADLINES.has(code)) {
    return { ok: false, reason: "timeout", message: "the page did not answer in time" };
  }
  if (code !== null && TLS.test(code)) {
    return { ok: false, reason: "tls_failure", message: `the page's TLS failed (${code})` };
  }
  if (code !== null && UNREACHABLE.has(code)) {
    return {
      ok: false,
      reason: "unreachable",
      message: `the page's server cannot be reached (${code})`,
    };
  }
  return { ok: false, reason: "failed", message: "the connection to the page's server failed" };
}

function errorCode(error: unknown): string | null {
  let current: unknown = error;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && current instanceof Object; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string") return code;
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}
