/**
 * One call of the gateway, always ending in an envelope: the gateway's own, or one the CLI writes
 * when the gateway could not be reached (`transport_error`), did not answer in time
 * (`gateway_timeout`), or answered something that is not an envelope (`bad_gateway_answer`).
 */
import * as v from "valibot";
import type { Command } from "../protocol/codes.ts";
import { type Envelope, EnvelopeSchema } from "../protocol/envelope-schema.ts";
import { MAX_GATEWAY_ANSWER_BYTES } from "../protocol/limits.ts";
import { buildEnvelope } from "../envelope/build-envelope.ts";
import { codeOfStatus } from "../envelope/code-table.ts";
import { decodeUtf8, readBounded } from "../io/bounded-reader.ts";
import { parseRetryAfter } from "../io/retry-after.ts";
import { readSearchStream, type SearchEvent } from "./read-search-stream.ts";
import { displayUrl, type Target } from "./resolve-target.ts";
import { errorCode } from "./saved-connection.ts";

export type GatewayCall = {
  /** The command named in an envelope the CLI writes itself. */
  command: Command;
  target: Target;
  /** A route below the gateway's base URL, e.g. `v1/status`. */
  route: string;
  /** A JSON body to POST; GET without one. */
  body?: string;
  /** From sending the request to the end of the answer. */
  timeoutMs: number;
  requestId: string;
  fetch: typeof fetch;
  /** Ask for the event stream and report each event; the envelope is rebuilt from the events. */
  stream?: (event: SearchEvent) => void;
  /** What a person can do when the gateway cannot be reached, added to that message. */
  unreachable?: string;
};

export async function callGateway(call: GatewayCall): Promise<Envelope> {
  const { command, requestId, target } = call;
  const where = displayUrl(target.base);
  const headers: Record<string, string> = {
    accept: call.stream ? "application/x-ndjson, application/json" : "application/json",
    "x-request-id": requestId,
  };
  if (call.body !== undefined) headers["content-type"] = "application/json";
  if (target.token !== null) headers.authorization = `Bearer ${target.token}`;
  const signal = AbortSignal.timeout(call.timeoutMs);
  const failed = (error: unknown): Envelope =>
    signal.aborted
      ? buildEnvelope(command, "gateway_timeout", requestId, {
        error: { message: `the gateway at ${where} did not answer within ${call.timeoutMs} ms` },
      })
      : buildEnvelope(command, "transport_error", requestId, {
        error: {
          message: `could not reach the gateway at ${where} (${causeCode(error)})${
            call.unreachable === undefined ? "" : `: ${call.unreachable}`
          }`,
        },
      });
  const bad = (why: string): Envelope =>
    buildEnvelope(command, "bad_gateway_answer", requestId, {
      error: { message: `the gateway at ${where} ${why}` },
    });

  let res: Response;
  try {
    res = await call.fetch(new URL(call.route, target.base), {
      method: call.body === undefined ? "GET" : "POST",
      headers,
      ...(call.body === undefined ? {} : { body: call.body }),
      signal,
      // A redirect could carry the token elsewhere; the person should choose the new URL.
      redirect: "manual",
    });
  } catch (error) {
    return failed(error);
  }
  try {
    if (res.status >= 300 && res.status < 400 || res.type === "opaqueredirect") {
      await res.body?.cancel().catch(() => {});
      const location = res.headers.get("location");
      return bad(`answered a redirect${location ? ` to ${location}` : ""}; use that URL instead`);
    }
    const type = res.headers.get("content-type") ?? "";
    if (call.stream && res.ok && /^application\/x-ndjson\b/i.test(type)) {
      const read = await readSearchStream(res.body, call.stream);
      if (read.ok) return read.envelope;
      switch (read.reason) {
        case "too_large":
          return bad(`streamed more than ${MAX_GATEWAY_ANSWER_BYTES} bytes`);
        case "no_done":
          return buildEnvelope(command, "transport_error", requestId, {
            error: { message: `the stream from ${where} ended before its done event` },
          });
        case "not_an_event":
        case "not_an_envelope":
          return bad("streamed something that is not the search events of an envelope");
        default: {
          const never: never = read.reason;
          throw new Error(`unhandled stream outcome ${never}`);
        }
      }
    }
    const read = await readBounded(res.body, MAX_GATEWAY_ANSWER_BYTES, null);
    if (!read.ok) return bad(`answered more than ${MAX_GATEWAY_ANSWER_BYTES} bytes`);
    const text = decodeUtf8(read.bytes);
    const envelope = text === null ? null : parseEnvelope(text);
    if (envelope !== null) return envelope;
    return fromStatus(res, command, requestId, where) ??
      bad(`answered HTTP ${res.status} with something that is not an envelope`);
  } catch (error) {
    return failed(error);
  }
}

function parseEnvelope(text: string): Envelope | null {
  try {
    const parsed = v.safeParse(EnvelopeSchema, JSON.parse(text));
    return parsed.success ? parsed.output : null;
  } catch {
    return null;
  }
}

/** What a bare status means, for the message; the code itself comes from the one code table. */
const STATUS_SAYS: Record<NonNullable<ReturnType<typeof codeOfStatus>>, string> = {
  unauthorized: "a valid token is needed",
  forbidden: "the token is not allowed here",
  rate_limited: "too many requests",
};

/**
 * An answer that is not an envelope but whose status still says what to do (a proxy's 401, 403 or
 * 429 page): a 401 means log in, never connect.
 */
function fromStatus(
  res: Response,
  command: Command,
  requestId: string,
  where: string,
): Envelope | null {
  const code = codeOfStatus(res.status);
  if (code === null) return null;
  const wait = code === "rate_limited"
    ? parseRetryAfter(res.headers.get("retry-after"), Date.now())
    : null;
  return buildEnvelope(command, code, requestId, {
    error: { message: `${where} answered ${res.status}: ${STATUS_SAYS[code]}` },
    ...(wait === null ? {} : { retry_after_ms: wait }),
  });
}

/** Node's fetch hides the reason in `cause` (ECONNREFUSED, ENOTFOUND, UND_ERR_*). */
function causeCode(error: unknown): string {
  const cause = (error as { cause?: unknown }).cause;
  return cause !== undefined ? errorCode(cause) : errorCode(error);
}
