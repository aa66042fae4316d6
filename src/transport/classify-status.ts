/**
 * Reading a status into an outcome (docs/protocol.md, "Failing honestly"): a provider's non-2xx
 * answer with or without an error body, a third-party API's status in a built-in or an example
 * provider, and a ProviderError thrown in process. One table maps a status to a provider-error
 * code, one maps a code to an outcome; nothing else compares a status.
 */
import type { ProviderErrorCode } from "../protocol/codes.ts";
import { MAX_PROVIDER_WAIT_MS } from "../protocol/limits.ts";
import { ProviderError } from "../protocol/provider-contract.ts";
import { NOT_SUPPORTED_STATUSES } from "../protocol/provider-actions.ts";
import type { ProviderErrorFields } from "../protocol/provider-wire.ts";
import { redact } from "../io/redact.ts";
import { failed, type Failure } from "./failure.ts";

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

/** A provider that does not implement an action it was asked (docs/protocol.md, "Actions: describe, health, expand, refresh"). */
export type Unsupported = { kind: "unsupported"; message: string };

/**
 * Maps a provider's non-2xx answer to an action other than search: `unsupported` when the provider
 * does not implement the action (an `unsupported_action` body, or 404, 405 or 501 without a body
 * code; and, for describe and for an action the provider's describe does not declare, any of
 * NOT_SUPPORTED_STATUSES without a code or with `invalid_request`, as a provider written before
 * the action refuses a request it does not know), else the failure classifyStatus reads. A 404
 * with `locator_unknown` is an answer about the locator, not about the action.
 */
export function classifyActionStatus(
  action: "describe" | "health" | "expand" | "refresh" | "stats",
  status: number,
  body: ProviderErrorFields | null,
  retryAfterHeaderMs: number | null,
  /** Whether the provider's describe lists the action; undefined when that is not known. */
  declared?: boolean,
): Unsupported | Failure {
  const code = body?.code;
  const undeclared = action === "describe" || declared === false;
  const notImplemented = code === "unsupported_action" ||
    (code === undefined && (status === 404 || status === 405 || status === 501)) ||
    (undeclared && NOT_SUPPORTED_STATUSES.includes(status) &&
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

/** A wait a provider asked for, as whole milliseconds within MAX_PROVIDER_WAIT_MS. */
function providerWait(ms: number | null | undefined): number | undefined {
  if (ms === null || ms === undefined || !(ms >= 0)) return undefined;
  return Math.min(Math.ceil(ms), MAX_PROVIDER_WAIT_MS);
}
