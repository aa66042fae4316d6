/**
 * The expected outcome of the fuzzed attempt, computed from what the provider sent
 * (docs/protocol.md): a success with its candidate count, a failure with its outcomes, codes and
 * retryability, or any documented failure when the bytes broke in transit; with the readings each
 * runtime's provider client may give interim answers and codecs it did not offer.
 */
import { PROVIDER_ERROR_CODES } from "../../src/protocol/codes.ts";
import { MAX_LOCATOR_CHARS, MAX_PROVIDER_BODY_BYTES } from "../../src/protocol/limits.ts";
import { MAX_ERROR_BODY_BYTES } from "../../src/protocol/limits.ts";
import { type FuzzAnswer, JSON_TYPES } from "./fuzz-answer.ts";
import type { Rendered } from "./fuzz-render.ts";
import type { Played } from "./fuzz-server.ts";

export type Expectation =
  | { kind: "success"; count: number }
  | { kind: "failure"; outcomes: string[]; codes?: string[]; retryable?: boolean }
  /** Broken in transit: any documented failure or, when the bytes happen to be complete, success. */
  | { kind: "documented" };

export const PROTOCOL = "provider_protocol_error";
const fail = (outcome: string, code?: string, retryable?: boolean): Expectation => ({
  kind: "failure",
  outcomes: [outcome],
  ...(code === undefined ? {} : { codes: [code] }),
  ...(retryable === undefined ? {} : { retryable }),
});

const CLEAN_FRAMING = new Set(["length", "chunked", "close"]);
const UNDECODABLE = ["invalid_encoding", "invalid_utf8", "invalid_json"];

/**
 * The failure a non-2xx answer must be (docs/protocol.md): a readable provider-error body's valid
 * `code` decides, whatever its other fields; otherwise the status does.
 */
function statusFailure(a: FuzzAnswer, r: Rendered, status: number): Expectation {
  const b = a.body;
  const readable = (r.decoded === "plain" || r.decoded === "decodes") &&
    r.decodedBytes <= MAX_ERROR_BODY_BYTES;
  const said = readable && b.kind === "error" && b.version === "tracefetch.provider-error.v1" &&
      (PROVIDER_ERROR_CODES as readonly string[]).includes(b.code)
    ? b.code
    : null;
  const code = said ?? (status === 429 ? "rate_limited" : "search_failed");
  // A readable body's `retryable: false` always holds; `true` never raises the table's answer.
  const refused = readable && b.kind === "error" && b.version === "tracefetch.provider-error.v1" &&
    b.retryable === false;
  const retryable = !refused && (code === "rate_limited" || code === "adapter_unavailable" ||
    (code === "search_failed" && (status >= 500 || status === 408)));
  return fail(
    code === "adapter_unavailable" ? "adapter_unavailable" : "search_failed",
    code,
    retryable,
  );
}

/** The outcome of a complete, well-framed 2xx answer with a JSON content type. */
function answerOutcome(a: FuzzAnswer, r: Rendered): Expectation {
  // Whether a client notices a cut or mislabelled stream before or after handing out some bytes
  // is its own affair; either way the answer is unusable and the provider's fault.
  if (r.decoded === "undecodable") {
    // A cut stream may decode past the cap before its cut is reached.
    const codes = r.plain.length > MAX_PROVIDER_BODY_BYTES
      ? [...UNDECODABLE, "body_too_large"]
      : UNDECODABLE;
    return { kind: "failure", outcomes: [PROTOCOL], codes, retryable: false };
  }
  if (r.decoded === "bomb" || r.decodedBytes > MAX_PROVIDER_BODY_BYTES) {
    return fail(PROTOCOL, "body_too_large", false);
  }
  const b = a.body;
  switch (b.kind) {
    case "answer": {
      if (b.mutation !== undefined) return fail(PROTOCOL, "schema_violation", false);
      if (b.identity !== undefined) return fail(PROTOCOL, "identity_mismatch", false);
      const short = b.candidates.filter((c) => Array.from(c.locator).length <= MAX_LOCATOR_CHARS);
      return { kind: "success", count: Math.min(a.limit, short.length) };
    }
    case "huge":
      return { kind: "success", count: 1 };
    case "error":
      return fail(PROTOCOL, "schema_violation", false);
    case "invalid-json":
    case "empty":
      return fail(PROTOCOL, "invalid_json", false);
    case "invalid-utf8":
      return fail(PROTOCOL, "invalid_utf8", false);
  }
}

/** `\r\n` after the last chunk, then `0\r\n\r\n`. */
const CHUNKED_TERMINATOR_BYTES = 7;

export function expectationOf(a: FuzzAnswer, r: Rendered): Expectation {
  if (!CLEAN_FRAMING.has(a.framing.kind)) return { kind: "documented" };
  const status = a.final === "none" ? null : a.final;
  const ending = a.ending.kind;
  if (ending === "close-at" || ending === "reset-at") return { kind: "documented" };
  if (ending === "hang-at") {
    // Nothing final arrived: only the deadline can end the attempt.
    if (status === null || r.cut < r.headEnd) return fail("timeout", "timeout", true);
    if (status >= 300 && status < 400) return fail(PROTOCOL, "redirect", false);
    if (status === 204 || status === 205) return fail(PROTOCOL, "invalid_json", false);
    if (status < 300 && !isJsonType(a.contentType)) {
      return fail(PROTOCOL, "wrong_content_type", false);
    }
    // A hang inside the chunked terminator may end the body or not: a compressed stream ends itself
    // (a client that decodes as it reads, Deno's, finishes at the stream's end), and workerd's
    // client ends the body once the zero-size chunk's line arrived, without the final CRLF.
    const terminator = r.bytes.length - r.cut <= CHUNKED_TERMINATOR_BYTES;
    if (a.framing.kind === "chunked" && terminator) return { kind: "documented" };
    // The client waits for the rest of a body it can read, unless what came already reaches the
    // cap it reads to (64 KiB of an error body, the whole cap of an answer).
    const cap = status >= 400 ? MAX_ERROR_BODY_BYTES : MAX_PROVIDER_BODY_BYTES;
    const waits = (r.decoded === "plain" || r.decoded === "decodes") && r.decodedBytes <= cap;
    return waits ? fail("timeout", "timeout", true) : { kind: "documented" };
  }
  if (status === null) return { kind: "documented" };
  if (status >= 300 && status < 400) return fail(PROTOCOL, "redirect", false);
  if (status >= 400) return statusFailure(a, r, status);
  if (status === 204 || status === 205) return fail(PROTOCOL, "invalid_json", false);
  if (!isJsonType(a.contentType)) return fail(PROTOCOL, "wrong_content_type", false);
  return answerOutcome(a, r);
}

/**
 * What each runtime's provider client makes of interim 1xx answers before the final one
 * (docs/protocol.md): workerd hands the first interim status over as the answer, and Node's client
 * refuses an unasked-for `100 Continue` as a broken answer. Deno reads past every interim answer.
 */
function interimReadings(a: FuzzAnswer, runtime: string): Expectation[] {
  if (a.interim.length === 0) return [];
  if (runtime === "workerd") return [fail(PROTOCOL, "interim_response", false)];
  if (runtime === "Node" && a.interim.includes(100)) {
    return [fail("adapter_unavailable", "connection_reset", true)];
  }
  return [];
}

/**
 * What the attempt may be. A codec the request did not offer (Deno's fetch offers gzip and br, not
 * deflate) may reach the gateway decoded or as it was sent: either reading is allowed.
 */
export function expectationsOf(played: Played, runtime: string): Expectation[] {
  const { answer: a, rendered: r } = played;
  const main = [expectationOf(a, r), ...interimReadings(a, runtime)];
  const e = a.encoding;
  if (e.kind === "none" || e.kind === "label") return main;
  const offered = (played.acceptEncoding ?? "").split(",").map((c) =>
    c.split(";")[0]?.trim().toLowerCase()
  );
  if (offered.includes(e.codec)) return main;
  const passed: Rendered = e.kind === "mislabelled"
    ? { ...r, decoded: "plain", decodedBytes: r.plain.length }
    : { ...r, decoded: "undecodable" };
  return [...main, expectationOf(a, passed)];
}

function isJsonType(type: string | null): boolean {
  return type !== null && JSON_TYPES.includes(type);
}
