/** Envelopes for what the CLI refuses or fails at itself, always with the header from CODES. */
import type { Command, EnvelopeCode } from "../protocol/codes.ts";
import type { RequestProblem } from "../protocol/search-request.ts";
import { buildEnvelope, type EnvelopeExtras } from "../envelope/build-envelope.ts";
import type { Reply } from "./cli-context.ts";

export function problemReply(
  command: Command,
  code: EnvelopeCode,
  requestId: string,
  message: string,
  field?: string,
  extras: EnvelopeExtras = {},
): Reply {
  const error = field === undefined || field === "" ? { message } : { message, field };
  return {
    kind: "envelope",
    envelope: buildEnvelope(command, code, requestId, { ...extras, error }),
  };
}

/** A RequestProblem (from request parsing or planning) as a reply. */
export function requestProblemReply(
  command: Command,
  problem: RequestProblem,
  requestId: string,
): Reply {
  return problemReply(command, problem.code, requestId, problem.message, problem.field);
}
