/**
 * Builds envelopes. Every answer of every route is one of these (docs/envelope.md); the header
 * always comes from the code table.
 */
import type { Command, EnvelopeCode } from "../protocol/codes.ts";
import type { Envelope, Mining } from "../protocol/envelope-schema.ts";
import { codeRow } from "./code-table.ts";

/** Mining stays off until a sink is configured; a search still says so. */
export const MINING_DISABLED: Mining = {
  state: "disabled",
  configured: false,
  recorded: false,
  health: [],
};

export type EnvelopeExtras = {
  error?: { message: string; field?: string };
  retry_after_ms?: number;
  result?: Envelope["result"];
  mining?: Mining;
  /** For all_providers_failed: whether any failure was retryable (decides retry vs report). */
  anyRetryable?: boolean;
};

export function buildEnvelope(
  command: Command,
  code: EnvelopeCode,
  requestId: string,
  extras: EnvelopeExtras = {},
): Envelope {
  const row = codeRow(code, extras.anyRetryable ?? false);
  const envelope: Envelope = {
    version: 1,
    command,
    ok: row.exit === 0,
    exit_code: row.exit,
    status: row.status,
    code,
    retryable: row.retryable,
    action: row.action,
    request_id: requestId,
  };
  if (extras.error) envelope.error = extras.error;
  if (extras.retry_after_ms !== undefined) envelope.retry_after_ms = extras.retry_after_ms;
  if (extras.result) envelope.result = extras.result;
  if (extras.mining) envelope.mining = extras.mining;
  return envelope;
}

/** A refusal or fault: the envelope of `code` with a message for people (and the field to fix). */
export function problemEnvelope(
  command: Command,
  code: EnvelopeCode,
  requestId: string,
  message: string,
  field?: string,
  extras: EnvelopeExtras = {},
): Envelope {
  const error = field === undefined || field === "" ? { message } : { message, field };
  return buildEnvelope(command, code, requestId, { ...extras, error });
}

/** The HTTP status for an envelope's code. */
export function httpStatusOf(envelope: Envelope): number {
  return codeRow(envelope.code, envelope.retryable).http || 500;
}
