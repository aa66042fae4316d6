/**
 * The only place where something that went wrong becomes an attempt outcome (design 3.4).
 *
 * Node's fetch (undici) reports failures as `TypeError("fetch failed")` with a `cause` carrying a
 * system or `UND_ERR_*` code; Deno and workerd report them as plain errors with a message. Both are
 * mapped here, explicitly, and nowhere else.
 */
import type { AttemptCode, AttemptOutcome, TimeoutBudget } from "../protocol/codes.ts";
import { MAX_PROVIDER_WAIT_MS } from "../protocol/limits.ts";
import { PROVIDER_ERROR_STATUS, type ProviderErrorFields } from "../protocol/provider-wire.ts";
import { AttemptAbort } from "./attempt-abort.ts";
import { ProviderError } from "./provider-client.ts";
import { redact } from "./redact.ts";

export type Failure = {
  outcome: Exclude<AttemptOutcome, "success" | "skipped">;
  code: AttemptCode;
  retryable: boolean;
  message: string;
  budget?: TimeoutBudget;
  retry_after_ms?: number;
};

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

/**
 * The code a client puts on a body that does not decode as its content-encoding says (the Node
 * client marks its decoder's own failures with it).
 */
export const UNDECODABLE_BODY = "ERR_CONTENT_DECODING_FAILED";
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
  // Error text names the endpoint's host and port, which callers never see: report the code only.
  const detail = code ?? (error instanceof Error ? error.name : "error");
  if (code !== null && UNDICI_DEADLINES.has(code)) {
    return {
      outcome: "timeout",
      code: "timeout",
      retryable: true,
      budget: "provider_timeout",
      message: `the HTTP client's own deadline fired (${code})`,
    };
  }
  if (phase === "adapter" && error instanceof ProviderError) {
    const body = {
      code: error.code,
      message: error.message,
      ...(error.retryAfterMs === undefined ? {} : { retry_after_ms: error.retryAfterMs }),
    };
    const failure = classifyStatus(PROVIDER_ERROR_STATUS[error.code], body, null, "in process");
    // The adapter knows better than a status code whether trying again can help (a rejected key cannot).
    return error.retryable === undefined ? failure : { ...failure, retryable: error.retryable };
  }
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
      `the connection was lost while reading the body (${detail})`,
    );
  }
  if (
    code !== null && DNS.has(code) || /dns|lookup|resolve|name or service not known/i.test(text)
  ) {
    return failed(
      "adapter_unavailable",
      "dns_failure",
      true,
      `the provider's host could not be resolved (${detail})`,
    );
  }
  if (code !== null && REFUSED.has(code) || /refused/i.test(text)) {
    return failed(
      "adapter_unavailable",
      "connection_refused",
      true,
      `the provider refused the connection (${detail})`,
    );
  }
  if (code !== null && TLS.test(code) || /certificate|tls|ssl/i.test(text)) {
    return failed(
      "adapter_unavailable",
      "tls_failure",
      true,
      `the TLS handshake failed (${detail})`,
    );
  }
  if (code !== null && RESET.has(code) || /reset|closed|terminated|socket/i.test(text)) {
    return failed(
      "adapter_unavailable",
      "connection_reset",
      true,
      `the connection was reset before a response (${detail})`,
    );
  }
  if (code !== null && UNREACHABLE.has(code)) {
    return failed(
      "adapter_unavailable",
      "adapter_unavailable",
      true,
      `the provider could not be reached (${detail})`,
    );
  }
  return failed(
    "adapter_unavailable",
    "adapter_unavailable",
    true,
    `the provider could not be reached (${detail})`,
  );
}

/** Maps a non-2xx answer, with what its provider-error body validly says, to a failure. */
export function classifyStatus(
  status: number,
  body: ProviderErrorFields | null,
  retryAfterHeaderMs: number | null,
  /** Where the failure was reported: the HTTP status, or an in-process adapter. */
  source = `HTTP ${status}`,
): Failure {
  const said = body?.message ? `: ${redact(body.message)}` : "";
  // The one place a provider's wait becomes the caller's: never negative, never past the cap.
  const retryAfter = providerWait(body?.retry_after_ms) ?? providerWait(retryAfterHeaderMs);
  const withWait = (f: Failure): Failure =>
    retryAfter === undefined ? f : { ...f, retry_after_ms: retryAfter };
  const code = body?.code ?? (status === 429 ? "rate_limited" : null);
  switch (code) {
    case "rate_limited":
      return withWait(
        failed(
          "search_failed",
          "rate_limited",
          true,
          `the provider is rate limiting (${source})${said}`,
        ),
      );
    case "adapter_unavailable":
      return withWait(
        failed(
          "adapter_unavailable",
          "adapter_unavailable",
          true,
          `the provider says it is unavailable (${source})${said}`,
        ),
      );
    case "invalid_request":
      return failed(
        "search_failed",
        "invalid_request",
        false,
        `the provider refused the request (${source})${said}`,
      );
    case "unsupported_action":
      return failed(
        "search_failed",
        "unsupported_action",
        false,
        `the provider does not support this action (${source})${said}`,
      );
    case "search_failed":
    case null: {
      const retryable = status >= 500 || status === 408;
      return withWait(
        failed(
          "search_failed",
          "search_failed",
          retryable,
          `the provider answered ${source}${said}`,
        ),
      );
    }
    default: {
      const never: never = code;
      throw new Error(`unhandled provider error code ${String(never)}`);
    }
  }
}

/** A 2xx answer the gateway cannot use. Never retryable: the same request gets the same answer. */
export function protocolError(code: AttemptCode, message: string): Failure {
  return failed("provider_protocol_error", code, false, redact(message));
}

/** A wait a provider asked for, as whole milliseconds within MAX_PROVIDER_WAIT_MS. */
function providerWait(ms: number | null | undefined): number | undefined {
  if (ms === null || ms === undefined || !(ms >= 0)) return undefined;
  return Math.min(Math.ceil(ms), MAX_PROVIDER_WAIT_MS);
}

/** An HTTP-date (RFC 9110 section 5.6.7) in any of its three forms opens with the day's name. */
const HTTP_DATE = /^(mon|tue|wed|thu|fri|sat|sun)[a-z]*,?\s/i;

/**
 * Retry-After (RFC 9110 section 10.2.3): delay-seconds or an HTTP-date, as milliseconds from now;
 * null when it is neither. Delay-seconds of any length come back as a safe integer: past what one
 * holds, the wait is only "too long", which the cap in classifyStatus turns into its maximum.
 */
export function parseRetryAfter(value: string | null, nowMs: number): number | null {
  if (value === null) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) {
    const ms = Number(trimmed) * 1000;
    return Number.isSafeInteger(ms) ? ms : Number.MAX_SAFE_INTEGER;
  }
  if (!HTTP_DATE.test(trimmed)) return null;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
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

function failed(
  outcome: Failure["outcome"],
  code: AttemptCode,
  retryable: boolean,
  message: string,
): Failure {
  return { outcome, code, retryable, message: redact(message) };
}

/** Whether a body-phase error is the body failing to decompress rather than the connection failing. */
function undecodable(code: string | null, error: unknown, text: string): boolean {
  if (code !== null) return code === UNDECODABLE_BODY || DECODER_CODES.test(code);
  return error instanceof TypeError && DECODER_TEXT.test(text);
}

function errorCode(error: unknown): string | null {
  for (let e: unknown = error, depth = 0; e && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") return code;
    e = (e as { cause?: unknown }).cause;
  }
  return null;
}

function errorText(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error, depth = 0; e && depth < 4; depth++) {
    const message = (e as { message?: unknown }).message;
    if (typeof message === "string" && message !== "") parts.push(message);
    e = (e as { cause?: unknown }).cause;
  }
  return parts.join(": ") || String(error);
}
