/**
 * One call to a third-party JSON API, as the `exa` and `github` built-ins and the example providers
 * that bridge one (searxng, papers) make it: no redirects, a bounded and strictly decoded JSON
 * body, and every failure but the caller's own deadline or departure thrown as a ProviderError with
 * a code, never an empty success. A non-2xx status goes through the classifier's one table
 * (failureFromStatus); a caller that knows more about its API's statuses says what they mean, never
 * which code they get. An upstream message is quoted short and redacted, and no message names the
 * upstream host.
 *
 * Web APIs only: the same code runs on Node, Deno and Workers.
 */
import * as v from "valibot";
import {
  DEFAULT_PROVIDER_TIMEOUT_SECONDS,
  MAX_PROVIDER_BODY_BYTES,
  MAX_QUOTED_CHARS,
} from "../protocol/limits.ts";
import { ProviderError } from "../protocol/provider-contract.ts";
import { readProviderError } from "../protocol/provider-wire.ts";
import { endpointProblem } from "../protocol/url-policy.ts";
import { answerOf } from "../io/provider-exchange.ts";
import { classifyThrown } from "./classify-thrown.ts";
import { failureFromStatus, NetworkFailure, type StatusMeaning } from "./classify-status.ts";
import { parseRetryAfter } from "../io/retry-after.ts";
import { redact } from "../io/redact.ts";
import { type AnswerRead, readAnswer } from "./read-answer.ts";

/**
 * The deadline an example provider gives its upstream call: the gateway's default provider
 * timeout. Behind serveProvider the gateway's disconnect normally ends the call sooner; this bounds
 * it when nothing does. A built-in needs none: its attempt's deadline always fires.
 */
export const UPSTREAM_TIMEOUT_MS = DEFAULT_PROVIDER_TIMEOUT_SECONDS * 1_000;

export type Upstream = {
  /** Names the service in messages, e.g. "SearXNG" or "github search/issues". */
  label: string;
  fetch: typeof fetch;
  /** Epoch milliseconds, for Retry-After dates. */
  now: () => number;
  /** Decoded bytes of a success body read at most; the body is cancelled past it. */
  maxBodyBytes: number;
  /** Our own deadline for one call; null when the caller's signal is the only one. */
  timeoutMs: number | null;
};

/** The global fetch (looked up at each call) and clock unless the caller passes its own. */
export function upstream(
  label: string,
  options: { fetch?: typeof fetch; now?: () => number },
  limits: { maxBodyBytes?: number; timeoutMs?: number } = {},
): Upstream {
  return {
    label,
    fetch: options.fetch ?? ((input, init) => fetch(input, init)),
    now: options.now ?? (() => Date.now()),
    maxBodyBytes: limits.maxBodyBytes ?? MAX_PROVIDER_BODY_BYTES,
    timeoutMs: limits.timeoutMs ?? null,
  };
}

export type UpstreamRequest = {
  method: "GET" | "POST";
  headers: Record<string, string>;
  body?: string;
};

/** A GET that asks for JSON: all a bridged API needs beyond its URL. */
export const GET_JSON: UpstreamRequest = { method: "GET", headers: { accept: "application/json" } };

/** A non-2xx answer, for a caller that knows what its API's statuses mean. */
export type Refusal = {
  status: number;
  headers: Headers;
  /** The error body parsed as JSON; null when there is none, it is too large, or it is not JSON. */
  body: unknown;
  /** The body's `message` (else `error`) string, quoted short and redacted; "" when none. */
  said: string;
  /** The Retry-After wait in milliseconds, when the answer carried one. */
  wait: number | undefined;
};

/** What a caller reads in a refusal: what the status means in its API, and what to quote. */
export type RefusalReading = {
  meaning?: StatusMeaning | null | undefined;
  /** Replaces the quote of `message`/`error`, e.g. with an API's own error tag in front. */
  said?: string | undefined;
};

export type ReadRefusal = (refusal: Refusal) => RefusalReading;

/**
 * Sends one request and returns its 2xx body parsed as JSON; anything else throws a ProviderError.
 * The caller's own deadline or departure is rethrown untouched, so the transport reports it as
 * such; our own deadline (`timeoutMs`) is a failure that says how long we waited.
 */
export async function callJson(
  up: Upstream,
  url: string | URL,
  request: UpstreamRequest,
  signal: AbortSignal,
  read?: ReadRefusal,
): Promise<unknown> {
  const deadline = up.timeoutMs === null ? null : AbortSignal.timeout(up.timeoutMs);
  const both = deadline === null ? signal : AbortSignal.any([signal, deadline]);
  const timedOut = () => deadline !== null && deadline.aborted && !signal.aborted;
  let response: Response;
  try {
    response = await up.fetch(url, { ...request, redirect: "manual", signal: both });
  } catch (error) {
    throw thrown(up, error, "connect", both, timedOut());
  }
  const answer = answerOf(response);
  try {
    // An upstream call is not handed the search's byte budget; the per-answer cap still bounds it.
    const got = await readAnswer(answer, { budget: null, cap: up.maxBodyBytes, signal: both });
    switch (got.kind) {
      case "json":
        return got.json;
      case "unusable":
        throw unusable(up, got);
      case "refused": {
        const refused = refusal(up, response, got.body);
        const reading = read?.(refused) ?? {};
        throw failureFromStatus(refused.status, {
          who: up.label,
          said: reading.said ?? refused.said,
          body: readProviderError(refused.body),
          retryAfterMs: refused.wait,
          meaning: reading.meaning,
        });
      }
      default: {
        const never: never = got;
        throw new Error(`unhandled read ${JSON.stringify(never)}`);
      }
    }
  } catch (error) {
    if (error instanceof ProviderError) throw error;
    await answer.cancel();
    throw thrown(up, error, "body", both, timedOut());
  }
}

/**
 * A 2xx answer that is not the service's JSON, or a redirect: the same request would get the same
 * answer back, so none is worth retrying.
 */
function unusable(up: Upstream, got: Extract<AnswerRead, { kind: "unusable" }>): ProviderError {
  const { label } = up;
  switch (got.code) {
    case "redirect":
      // Only the configured base URL is called; the same request would be redirected again.
      return new ProviderError(
        "search_failed",
        `${label} answered a redirect (HTTP ${got.status}), which is never followed; check the base URL`,
        { retryable: false },
      );
    case "body_too_large":
      return new ProviderError(
        "search_failed",
        `${label} answered more than ${up.maxBodyBytes} decoded bytes; the body was cancelled`,
        { retryable: false },
      );
    case "wrong_content_type":
      return notJson(label, `content-type "${got.contentType.slice(0, MAX_QUOTED_CHARS)}"`);
    case "invalid_utf8":
      return notJson(label, "the body is not UTF-8");
    case "invalid_json":
      return notJson(
        label,
        got.status === 204 || got.status === 205 ? got.message : "the body does not parse as JSON",
      );
    default:
      return notJson(label, got.message);
  }
}

/** `json` as `schema` describes it; an answer without what we map fails the search, naming it. */
export function checkShape<S extends v.GenericSchema>(
  label: string,
  json: unknown,
  schema: S,
): v.InferOutput<S> {
  const parsed = v.safeParse(schema, json);
  if (parsed.success) return parsed.output;
  const [issue] = parsed.issues;
  const at = v.getDotPath(issue) || "body";
  const what = issue.received === "undefined" ? "is missing" : `is invalid (${issue.message})`;
  // The same request would get the same malformed answer: not worth retrying.
  throw new ProviderError("search_failed", `${label} answered an unexpected shape: ${at} ${what}`, {
    retryable: false,
  });
}

/** The failure for a 2xx answer that is not the service's JSON; a retry would get the same. */
export function notJson(label: string, why: string): ProviderError {
  return new ProviderError("search_failed", notJsonMessage(label, why), { retryable: false });
}

/** A short, redacted quote of an upstream error message, or "" when there is none. */
export function quote(message: unknown): string {
  if (typeof message !== "string" || message.trim() === "") return "";
  return redact(message, MAX_QUOTED_CHARS);
}

/** Why a base URL may not be called, or null when it may: the URL policy for a base URL. */
export function baseUrlProblem(raw: string, allowLoopback: boolean): string | null {
  return endpointProblem(raw, allowLoopback, "base");
}

function refusal(up: Upstream, response: Response, body: unknown): Refusal {
  const record = typeof body === "object" && body !== null && !Array.isArray(body)
    ? body as { message?: unknown; error?: unknown }
    : {};
  return {
    status: response.status,
    headers: response.headers,
    body,
    said: quote(typeof record.message === "string" ? record.message : record.error),
    wait: parseRetryAfter(response.headers.get("retry-after"), up.now()) ?? undefined,
  };
}

function notJsonMessage(label: string, why: string): string {
  return `${label} answered something that is not ${label} JSON: ${why}`;
}

/**
 * A thrown network error as the HTTP transport classifies it (so a built-in whose upstream does not
 * resolve is `dns_failure`, as a remote provider would be), its message naming the error's code
 * only: its text names the upstream host and port. The caller's deadline or departure is returned
 * untouched, for the transport to report as such.
 */
function thrown(
  up: Upstream,
  error: unknown,
  phase: "connect" | "body",
  signal: AbortSignal,
  timedOut: boolean,
): unknown {
  if (timedOut) {
    return new ProviderError(
      "search_failed",
      `${up.label} did not answer within ${(up.timeoutMs ?? 0) / 1_000} s`,
    );
  }
  if (signal.aborted) return error;
  const failure = classifyThrown(error, phase, signal);
  return new NetworkFailure({ ...failure, message: redact(`${up.label}: ${failure.message}`) });
}
