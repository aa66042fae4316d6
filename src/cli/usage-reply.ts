/** Envelopes for what the CLI refuses or fails at itself, always with the header from CODES. */
import type { Command } from "../protocol/codes.ts";
import type { RequestProblem } from "../protocol/search-request.ts";
import { problemEnvelope } from "../envelope/build-envelope.ts";
import type { Reply } from "./cli-context.ts";

/** problemEnvelope's refusal or fault as a reply. */
export function problemReply(...args: Parameters<typeof problemEnvelope>): Reply {
  return { kind: "envelope", envelope: problemEnvelope(...args) };
}

/** A RequestProblem (from request parsing or planning) as a reply. */
export function requestProblemReply(
  command: Command,
  problem: RequestProblem,
  requestId: string,
): Reply {
  return problemReply(command, problem.code, requestId, problem.message, problem.field);
}
