/**
 * The only place where something that went wrong becomes an attempt outcome (docs/protocol.md,
 * "Failing honestly" and "How every other failure is reported"): an HTTP status with or without an
 * error body, a third-party API's status in a built-in or an example provider, a ProviderError
 * thrown in process, a network error, a command provider's child that failed. One table maps a
 * status to a provider-error code, one maps a code to an outcome; nothing else compares a status.
 *
 * Node's fetch (undici) reports failures as `TypeError("fetch failed")` with a `cause` carrying a
 * system or `UND_ERR_*` code; Deno and workerd report them as plain errors with a message. Both are
 * mapped here, explicitly, and nowhere else.
 */
import type {
  AttemptCode,
  AttemptOutcome,
  ProviderErrorCode,
  TimeoutBudget,
} from "../protocol/codes.ts";
import { MAX_ERROR_CAUSE_DEPTH, MAX_PROVIDER_WAIT_MS } from "../protocol/limits.ts";
import { ProviderError } from "../protocol/provider-contract.ts";
import type { ProviderErrorFields } from "../protocol/provider-wire.ts";
import { AttemptAbort } from "./attempt-abort.ts";
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

/**
 * What a status means in one third-party API beyond the table, as its documentation says: a rate
 * limit (with the wait the API gives in its own way), or access only an operator can restore (a
 * rejected key, spent credits, a feature the service does not enable), which no retry fixes.
 */
export type StatusMeaning =
  | { means: "rate_limit"; retryAfterMs?: number | null | undefined }
  /** An expand's source: no such thing there (`locator_unknown`), or gone since (`locator_expired`). */
  | { means: "locator_unknown" | "locator_expired"; says?: string | undefined }
  | {
    means: "access_refused";
    /** What was refused, after the service's name: "rejected the API key". */
    says: string;
    /** What an operator should check: "check EXA_API_KEY". */
    hint?: string | undefined;
  };

/** What came with a non-2xx status, for failureFromStatus. */
export type StatusDetails = {
  /** What a `tracefetch.provider-error.v1` body validly says (readProviderError), if any. */
  body?: ProviderErrorFields | null | undefined;
  /** The wait the answer's Retry-After header asks for (parseRetryAfter), if any. */
  retryAfterMs?: number | null | undefined;
  /** What this status means in this API beyond the table, when its documentation says so. */
  meaning?: StatusMeaning | null | undefined;
  /** Who answered, for the message: "exa", "SearXNG". */
  who?: string | undefined;
  /** A short quote of what the answer said; the body's message when absent. */
  said?: string | undefined;
};

/**
 * The one table from a non-2xx status to a ProviderError, for an adapter to throw: the error body's
 * code when it has a valid one; else 429 is `rate_limited` with its wait, and anything else
 * `search_failed`, retryable for 408 and 5xx and not for any other 4xx (the same request would be
 * refused the same way). A body's `retryable: false` always holds.
 */
export function failureFromStatus(status: number, details: StatusDetails = {}): ProviderError {
  const { code, retryable, retryAfterMs } = readStatus(status, details);
  const said = details.said ?? details.body?.message ?? "";
  const meaning = details.meaning;
  const who = details.who ?? "the upstream";
  const message = meaning?.means === "access_refused"
    ? `${who} ${meaning.says} (HTTP ${status})${said ? `: ${said}` : ""}${
      meaning.hint ? `; ${meaning.hint}` : ""
    }`
    : (meaning?.means === "locator_unknown" || meaning?.means === "locator_expired") &&
        meaning.says
    ? `${who} ${meaning.says} (HTTP ${status})${said ? `: ${said}` : ""}`
    : `${OUTCOMES[code].says(who, `HTTP ${status}`)}${said ? `: ${said}` : ""}`;
  return new ProviderError(code, message, { retryable, retryAfterMs });
}

/** Maps a provider's non-2xx answer, with what its provider-error body validly says, to a failure. */
export function classifyStatus(
  status: number,
  body: ProviderErrorFields | null,
  retryAfterHeaderMs: number | null,
): Failure {
  return fromReading(
    readStatus(status, { body, retryAfterMs: retryAfterHeaderMs }),
    body?.message ?? "",
    `HTTP ${status}`,
  );
}

/** A provider that does not implement an action it was asked (docs/protocol.md, "Actions"). */
export type Unsupported = { kind: "unsupported"; message: string };

/**
 * Maps a provider's non-2xx answer to an action other than search: `unsupported` when the provider
 * does not implement the action (an `unsupported_action` body, or 404, 405 or 501 without a body
 * code; for `describe`, whose request has nothing to refuse, also a 400 from a provider that
 * predates it), else the failure classifyStatus reads. A 404 with `locator_unknown` is an answer
 * about the locator, not about the action.
 */
export function classifyActionStatus(
  action: "describe" | "health" | "expand" | "refresh",
  status: number,
  body: ProviderErrorFields | null,
  retryAfterHeaderMs: number | null,
): Unsupported | Failure {
  const code = body?.code;
  const notImplemented = code === "unsupported_action" ||
    (code === undefined && (status === 404 || status === 405 || status === 501)) ||
    (action === "describe" && (status === 400 || status === 404 || status === 405 ||
      status === 501) &&
      (code === undefined || code === "invalid_request"));
  if (notImplemented) {
    return {
      kind: "unsupported",
      message: `the provider does not support ${action} (HTTP ${status})`,
    };
  }
  return classifyStatus(status, body, retryAfterHeaderMs);
}

/** Maps a ProviderError thrown in process to a failure, straight from its code: no status between. */
export function classifyProviderError(error: ProviderError): Failure {
  if (error instanceof NetworkFailure) return error.failure;
  return fromReading(error, error.message, "in process");
}

/**
 * A built-in's or an example provider's own call to its upstream failed on the way (no answer, or
 * one that broke off). In process it is reported exactly as the HTTP transport reports its own
 * (`dns_failure`, `connection_refused`, ...); served over HTTP, it travels as the provider-error
 * code of its outcome.
 */
export class NetworkFailure extends ProviderError {
  override name = "NetworkFailure";
  constructor(readonly failure: Failure) {
    super(
      failure.outcome === "adapter_unavailable" ? "adapter_unavailable" : "search_failed",
      failure.message,
      { retryable: failure.retryable },
    );
  }
}

/**
 * A command provider's child that gave no answer: it could not start (`spawnError`, with the
 * executable as the manifest wrote it), or it exited otherwise than with 0. A missing or unrunnable
 * executable means the provider is not there: `adapter_unavailable`.
 */
export function commandFailure(
  ended:
    | { spawnError: unknown; command: string }
    | { exitCode: number | null; killedBy: string | null; stderr: string },
): ProviderError {
  if ("spawnError" in ended) {
    const code = (ended.spawnError as { code?: unknown } | null)?.code;
    const exe = ended.command;
    if (code === "ENOENT") {
      return new ProviderError("adapter_unavailable", `the command ${exe} was not found (ENOENT)`);
    }
    if (code === "EACCES" || code === "ENOEXEC" || code === "EISDIR") {
      return new ProviderError("adapter_unavailable", `the command ${exe} cannot be run (${code})`);
    }
    const detail = typeof code === "string" ? code : "spawn failed";
    return new ProviderError("search_failed", `the command ${exe} could not start (${detail})`);
  }
  const how = ended.exitCode === null ? `killed by ${ended.killedBy}` : `exit ${ended.exitCode}`;
  return new ProviderError("search_failed", ended.stderr ? `${how}: ${ended.stderr}` : how);
}

/** What a status and what came with it say, before it is a ProviderError or a failure. */
type Reading = {
  code: ProviderErrorCode;
  retryable?: boolean | undefined;
  retryAfterMs?: number | undefined;
};

function readStatus(status: number, details: StatusDetails): Reading {
  const { body, meaning } = details;
  const limited = meaning?.means === "rate_limit";
  const refused = meaning?.means === "access_refused";
  const locator = meaning?.means === "locator_unknown" || meaning?.means === "locator_expired"
    ? meaning.means
    : null;
  const code: ProviderErrorCode = body?.code ??
    (locator ??
      (limited || status === 429
        ? "rate_limited"
        : refused
        ? "adapter_unavailable"
        : "search_failed"));
  // 408 says the server gave up waiting and a 5xx that it failed: either may pass. Any other 4xx
  // refused this very request, and the same request would be refused again.
  const mayPass = status >= 500 || status === 408;
  const retryable = body?.retryable === false || refused || (code === "search_failed" && !mayPass)
    ? false
    : undefined;
  const retryAfterMs = body?.retry_after_ms ??
    (limited ? meaning.retryAfterMs : undefined) ??
    details.retryAfterMs ??
    undefined;
  return { code, retryable, retryAfterMs };
}

/**
 * The one table from a provider-error code to an attempt: its outcome, whether trying again may
 * help (a `retryable: false` from the provider can only lower it), whether a wait applies, and how
 * the message opens.
 */
const OUTCOMES: Record<
  ProviderErrorCode,
  {
    outcome: Failure["outcome"];
    retryable: boolean;
    waits: boolean;
    says: (who: string, source: string) => string;
  }
> = {
  rate_limited: {
    outcome: "search_failed",
    retryable: true,
    waits: true,
    says: (who, source) => `${who} is rate limiting (${source})`,
  },
  adapter_unavailable: {
    outcome: "adapter_unavailable",
    retryable: true,
    waits: true,
    says: (who, source) => `${who} says it is unavailable (${source})`,
  },
  invalid_request: {
    outcome: "search_failed",
    retryable: false,
    waits: false,
    says: (who, source) => `${who} refused the request (${source})`,
  },
  unsupported_action: {
    outcome: "search_failed",
    retryable: false,
    waits: false,
    says: (who, source) => `${who} does not support this action (${source})`,
  },
  locator_unknown: {
    outcome: "search_failed",
    retryable: false,
    waits: false,
    says: (who, source) => `${who} never issued this locator (${source})`,
  },
  locator_expired: {
    outcome: "search_failed",
    retryable: false,
    waits: false,
    says: (who, source) =>
      `${who} issued this locator, but its source has changed since (${source}); search again`,
  },
  search_failed: {
    outcome: "search_failed",
    retryable: true,
    waits: true,
    says: (who, source) => `${who} answered ${source}`,
  },
};

function fromReading(reading: Reading, message: string, source: string): Failure {
  const row = OUTCOMES[reading.code];
  const said = message ? `: ${redact(message)}` : "";
  const failure = failed(
    row.outcome,
    reading.code,
    row.retryable && reading.retryable !== false,
    `${row.says("the provider", source)}${said}`,
  );
  // The one place a provider's wait becomes the caller's: never negative, never past the cap.
  const wait = row.waits ? providerWait(reading.retryAfterMs) : undefined;
  return wait === undefined ? failure : { ...failure, retry_after_ms: wait };
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
 * holds, the wait is only "too long", which the classifier's cap turns into its maximum.
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
