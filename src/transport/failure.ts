/**
 * What a failed attempt is, and the two ways one is made that every classifier shares: a failure
 * with its message redacted, and a protocol error for a 2xx answer the gateway cannot use.
 */
import type { AttemptCode, AttemptOutcome, TimeoutBudget } from "../protocol/codes.ts";
import { redact } from "../io/redact.ts";

export type Failure = {
  outcome: Exclude<AttemptOutcome, "success" | "skipped">;
  code: AttemptCode;
  retryable: boolean;
  message: string;
  budget?: TimeoutBudget;
  retry_after_ms?: number;
};

/** A 2xx answer the gateway cannot use. Never retryable: the same request gets the same answer. */
export function protocolError(code: AttemptCode, message: string): Failure {
  return failed("provider_protocol_error", code, false, redact(message));
}

/** A failure with its message redacted. */
export function failed(
  outcome: Failure["outcome"],
  code: AttemptCode,
  retryable: boolean,
  message: string,
): Failure {
  return { outcome, code, retryable, message: redact(message) };
}
