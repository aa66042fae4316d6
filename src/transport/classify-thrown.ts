/**
 * classifyThrown: the only place a thrown error becomes an attempt outcome (docs/protocol.md,
 * "How every other failure is reported"): a network error before a response, one while the body
 * was read, or an error an in-process adapter threw (a ProviderError keeps its code).
 *
 * Node's fetch (undici) reports failures as `TypeError("fetch failed")` with a `cause` carrying a
 * system or `UND_ERR_*` code; Deno and workerd report them as plain errors with a message. Both are
 * mapped here, explicitly, and nowhere else.
 */
import { MAX_ERROR_CAUSE_DEPTH } from "../protocol/limits.ts";
import { ProviderError } from "../protocol/provider-contract.ts";
import { UNDECODABLE_BODY } from "../io/provider-exchange.ts";
import { AttemptAbort } from "./attempt-abort.ts";
import { classifyProviderError } from "./classify-status.ts";
import { failed, type Failure, protocolError } from "./failure.ts";

/**
 * Where the exchange was when it failed: before a response, while reading its body, or inside an
 * in-process adapter (where a throw means the search itself failed).
 */
export type Phase = "connect" | "body" | "adapter";

const DNS = new Set(["ENOTFOUND", "EAI_AGAIN", "EAI_NONAME", "EAI_FAIL", "EAI_NODATA"]);
const REFUSED = new Set(["ECONNREFUSED"]);
const RESET = new Set(["ECONNRESET", "EPIPE", "ECONNABORTED", "UND_ERR_SOCKET", "UND_ERR_CLOSED"]);
const UNREACHABLE = new Set([
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "UND_ERR_CONNECT_TIMEOUT",
]);
const UNDICI_DEADLINES = new Set(["UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"]);
const TLS =
  /^(ERR_TLS_|ERR_SSL_|CERT_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_(GET|VERIFY)_)/;

/** zlib's and brotli's own error codes, as Node's fetch passes them on in `cause`. */
const DECODER_CODES = /^(Z_|ERR__ERROR_)/;
/**
 * Deno and workerd report a body that does not decompress as a bare TypeError: "Invalid gzip
 * header", "brotli error", "unexpected end of file" (Deno); "Gzip decompression failed.",
 * "Brotli decompression failed.", "Gzip compressed stream ended prematurely." (workerd). A lost
 * connection reads differently ("error reading a body from connection").
 */
const DECODER_TEXT = /gzip|brotli|deflate|decompress|unexpected end of file|unexpected EOF/i;

/** Maps a thrown error (from fetch, a body read or an in-process adapter) to a failure. */
export function classifyThrown(error: unknown, phase: Phase, signal: AbortSignal): Failure {
  if (signal.aborted) return fromAbort(signal.reason);
  if (error instanceof AttemptAbort) return fromAbort(error);
  const code = errorCode(error);
  const text = errorText(error);
  // Error text names the endpoint's host and port, and a runtime's error class or code (undici's
  // UND_ERR_*, Deno's TypeError) means nothing to a caller: a message says what happened in the
  // protocol's own words, with the attempt's code.
  if (code !== null && UNDICI_DEADLINES.has(code)) {
    return {
      outcome: "timeout",
      code: "timeout",
      retryable: true,
      budget: "provider_timeout",
      message: "no complete answer before the HTTP client's own deadline (timeout)",
    };
  }
  if (phase === "adapter" && error instanceof ProviderError) return classifyProviderError(error);
  if (phase === "adapter") {
    return failed("search_failed", "search_failed", true, `the built-in failed: ${text}`);
  }
  if (phase === "body" && undecodable(code, error, text)) {
    return protocolError(
      "invalid_encoding",
      "the body does not decode as its content-encoding says",
    );
  }
  if (phase === "body") {
    return failed(
      "search_failed",
      "connection_lost",
      true,
      "the connection was lost while reading the body (connection_lost)",
    );
  }
  if (
    code !== null && DNS.has(code) || /dns|lookup|resolve|name or service not known/i.test(text)
  ) {
    return failed(
      "adapter_unavailable",
      "dns_failure",
      true,
      "the provider's host could not be resolved (dns_failure)",
    );
  }
  if (code !== null && REFUSED.has(code) || /refused/i.test(text)) {
    return failed(
      "adapter_unavailable",
      "connection_refused",
      true,
      "the provider refused the connection (connection_refused)",
    );
  }
  if (code !== null && TLS.test(code) || /certificate|tls|ssl/i.test(text)) {
    return failed(
      "adapter_unavailable",
      "tls_failure",
      true,
      "the TLS handshake failed (tls_failure)",
    );
  }
  if (code !== null && RESET.has(code) || /reset|closed|terminated|socket/i.test(text)) {
    return failed(
      "adapter_unavailable",
      "connection_reset",
      true,
      "the connection was reset before a response (connection_reset)",
    );
  }
  if (code !== null && UNREACHABLE.has(code)) {
    return failed(
      "adapter_unavailable",
      "adapter_unavailable",
      true,
      "the provider could not be reached (adapter_unavailable)",
    );
  }
  return failed(
    "adapter_unavailable",
    "adapter_unavailable",
    true,
    "the provider could not be reached (adapter_unavailable)",
  );
}

function fromAbort(reason: unknown): Failure {
  if (reason instanceof AttemptAbort && reason.kind === "timeout") {
    return {
      outcome: "timeout",
      code: "timeout",
      retryable: true,
      budget: reason.budget ?? "provider_timeout",
      message: `no complete answer before the ${
        reason.budget === "caller_deadline" ? "caller's deadline" : "provider's timeout"
      }`,
    };
  }
  return failed(
    "cancelled",
    "cancelled",
    false,
    "the caller went away before the provider answered",
  );
}

/** Whether a body-phase error is the body failing to decompress rather than the connection failing. */
function undecodable(code: string | null, error: unknown, text: string): boolean {
  if (code !== null) return code === UNDECODABLE_BODY || DECODER_CODES.test(code);
  return error instanceof TypeError && DECODER_TEXT.test(text);
}

function errorCode(error: unknown): string | null {
  for (let e: unknown = error, depth = 0; e && depth < MAX_ERROR_CAUSE_DEPTH; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") return code;
    e = (e as { cause?: unknown }).cause;
  }
  return null;
}

function errorText(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error, depth = 0; e && depth < MAX_ERROR_CAUSE_DEPTH; depth++) {
    const message = (e as { message?: unknown }).message;
    if (typeof message === "string" && message !== "") parts.push(message);
    e = (e as { cause?: unknown }).cause;
  }
  return parts.join(": ") || String(error);
}
