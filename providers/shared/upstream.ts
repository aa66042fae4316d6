/**
 * What the example providers that bridge a third-party JSON API share: one GET with no redirects
 * and a deadline, a bounded, strictly decoded body, and every failure thrown as a ProviderError so
 * serveProvider answers an honest provider-error body, never an empty success.
 *
 * Web APIs only: the same code runs on Node, Deno and Workers.
 */
import { DEFAULT_PROVIDER_TIMEOUT_SECONDS } from "../../src/protocol/limits.ts";
import { ConfigError } from "../../src/protocol/config-error.ts";
import { NAME_PATTERN } from "../../src/protocol/manifest-schema.ts";
import { endpointProblem } from "../../src/protocol/validate-manifest.ts";
import { decodeUtf8, readBounded } from "../../src/transport/bounded-reader.ts";
import { classifyThrown, parseRetryAfter } from "../../src/transport/classify.ts";
import { ProviderError } from "../../src/transport/provider-client.ts";
import { redact } from "../../src/transport/redact.ts";

/**
 * Our own deadline for one upstream call: the gateway's default provider timeout. The gateway's
 * disconnect normally ends the call sooner; this bounds it when nothing does.
 */
export const UPSTREAM_TIMEOUT_MS = DEFAULT_PROVIDER_TIMEOUT_SECONDS * 1_000;

/** An upstream error body is read this far: enough for an error code and a message, not a page. */
export const MAX_UPSTREAM_ERROR_BYTES = 65_536;

/** How much of an upstream error message we quote: enough to say what went wrong, not a page. */
const MAX_QUOTED_CHARS = 160;

export type Upstream = {
  /** Names the service in messages, e.g. "SearXNG". */
  label: string;
  fetch: typeof fetch;
  /** Epoch milliseconds, for Retry-After dates. */
  now: () => number;
  /** Decoded bytes of a success body read at most; the body is cancelled past it. */
  maxBodyBytes: number;
};

/**
 * Maps a non-2xx status to a ProviderError. `said` is a quoted upstream message (or ""), `wait`
 * the Retry-After in milliseconds when the answer carried one.
 */
export type StatusFailure = (
  status: number,
  said: string,
  wait: number | undefined,
) => ProviderError;

/** GETs `url` and returns its body parsed as JSON; anything else throws a ProviderError. */
export async function getJson(
  up: Upstream,
  url: URL,
  signal: AbortSignal,
  failure: StatusFailure,
): Promise<unknown> {
  const deadline = AbortSignal.timeout(UPSTREAM_TIMEOUT_MS);
  const both = AbortSignal.any([signal, deadline]);
  const timedOut = () => deadline.aborted && !signal.aborted;
  let response: Response;
  try {
    response = await up.fetch(url, {
      method: "GET",
      headers: { accept: "application/json" },
      redirect: "manual",
      signal: both,
    });
  } catch (error) {
    throw thrown(up.label, error, "connect", both, timedOut());
  }
  try {
    if (response.type === "opaqueredirect" || (response.status >= 300 && response.status < 400)) {
      await response.body?.cancel().catch(() => {});
      throw new ProviderError(
        "search_failed",
        `${up.label} answered a redirect (HTTP ${response.status}), which is never followed; check the base URL`,
        undefined,
        false,
      );
    }
    if (!response.ok) {
      const said = quote(await errorMessage(response));
      const wait = parseRetryAfter(response.headers.get("retry-after"), up.now()) ?? undefined;
      throw failure(response.status, said, wait);
    }
    const read = await readBounded(response.body, up.maxBodyBytes, null);
    if (!read.ok) {
      throw notJson(up.label, `more than ${up.maxBodyBytes} bytes; the body was cancelled`);
    }
    const text = decodeUtf8(read.bytes);
    if (text === null) throw notJson(up.label, "the body is not UTF-8");
    try {
      return JSON.parse(text);
    } catch {
      const type = (response.headers.get("content-type") ?? "none").slice(0, 60);
      throw notJson(up.label, `the body does not parse as JSON; content-type ${type}`);
    }
  } catch (error) {
    if (error instanceof ProviderError) throw error;
    throw thrown(up.label, error, "body", both, timedOut());
  }
}

/** The failure for a 2xx answer we cannot read as the service's JSON. */
export function notJson(label: string, why: string): ProviderError {
  return new ProviderError(
    "search_failed",
    `${label} answered something that is not ${label} JSON: ${why}`,
  );
}

/**
 * The statuses every JSON API shares: 429 is a rate limit (with its wait), 408 and 5xx are failures
 * worth retrying (with a wait when given), and any other 4xx means this request was refused.
 */
export function commonStatusFailure(label: string): StatusFailure {
  return (status, said, wait) => {
    if (status === 429) {
      return new ProviderError("rate_limited", `${label} is rate limiting (HTTP 429)${said}`, wait);
    }
    if (status >= 400 && status < 500 && status !== 408) {
      return new ProviderError(
        "invalid_request",
        `${label} refused the request (HTTP ${status})${said}`,
      );
    }
    return new ProviderError("search_failed", `${label} answered HTTP ${status}${said}`, wait);
  };
}

/** A base URL a provider may call: https, or http on a loopback host; no credentials, query or fragment. */
export function checkBaseUrl(flag: string, raw: string | undefined): URL {
  if (!raw) throw new ConfigError(`${flag} is required`);
  const problem = endpointProblem(raw, true);
  if (problem !== null) throw new ConfigError(`${flag} ${problem}`);
  const url = new URL(raw);
  if (url.search !== "") throw new ConfigError(`${flag} must not carry a query`);
  // A trailing slash makes relative paths ("search") resolve under the base's own path.
  if (!url.pathname.endsWith("/")) url.pathname = `${url.pathname}/`;
  return url;
}

/** A provider name or scope as the manifest requires it. */
export function checkName(flag: string, value: string | undefined): string {
  if (!value || !NAME_PATTERN.test(value)) {
    throw new ConfigError(
      `${flag} must match ${NAME_PATTERN} (got ${JSON.stringify(value ?? "")})`,
    );
  }
  return value;
}

function quote(message: string | null): string {
  return message === null || message.trim() === "" ? "" : `: ${redact(message, MAX_QUOTED_CHARS)}`;
}

/** The `message` or `error` string of a JSON error body, when there is one. */
async function errorMessage(response: Response): Promise<string | null> {
  const read = await readBounded(response.body, MAX_UPSTREAM_ERROR_BYTES, null).catch(() => null);
  const text = read?.ok ? decodeUtf8(read.bytes) : null;
  if (text === null) return null;
  try {
    const body = JSON.parse(text) as { message?: unknown; error?: unknown };
    if (typeof body.message === "string") return body.message;
    if (typeof body.error === "string") return body.error;
  } catch {
    // An HTML error page says nothing a caller can use: the status speaks for it.
  }
  return null;
}

/**
 * A thrown network error as a ProviderError, with the error's code only: its text names the
 * upstream host and port. The gateway's disconnect is rethrown untouched: nobody is listening.
 */
function thrown(
  label: string,
  error: unknown,
  phase: "connect" | "body",
  signal: AbortSignal,
  timedOut: boolean,
): unknown {
  if (timedOut) {
    return new ProviderError(
      "search_failed",
      `${label} did not answer within ${UPSTREAM_TIMEOUT_MS / 1_000} s`,
    );
  }
  const failure = classifyThrown(error, phase, signal);
  if (failure.outcome === "cancelled" || failure.outcome === "timeout") return error;
  return new ProviderError(
    failure.outcome === "adapter_unavailable" ? "adapter_unavailable" : "search_failed",
    `${label}: ${failure.message}`,
  );
}
