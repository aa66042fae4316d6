/**
 * One JSON-RPC message to an MCP server over Streamable HTTP (MCP 2025-06-18, "Transports"), on the
 * runtime's provider exchange: a POST whose answer is either `application/json` or an SSE stream
 * that carries the response. Plain fetch underneath, so Node, Deno and Workers speak it alike.
 *
 * Invariants:
 * - The body is read through the exchange's bounded reader: at most `cap` decoded bytes, charged to
 *   the search's byte budget when there is one; an SSE stream is read until the response to the
 *   request has arrived (a server SHOULD close it then, and may not) or to its end, and the
 *   deadline's signal cancels a stream that never carries it.
 * - A status, a redirect or an unusable body is classified by the same functions as a provider's.
 * - A 404 to a request that carried a session id means the server forgot the session.
 */
import { readProviderError } from "../protocol/provider-wire.ts";
import { isRecord } from "../protocol/json-value.ts";
import type { ByteBudget } from "../io/byte-budget.ts";
import type { Gate } from "../io/gate.ts";
import type { ProviderExchange } from "../io/provider-exchange.ts";
import { decodeUtf8 } from "../io/bounded-reader.ts";
import { parseRetryAfter } from "../io/retry-after.ts";
import { classifyStatus } from "./classify-status.ts";
import { classifyThrown } from "./classify-thrown.ts";
import { type Failure, protocolError } from "./failure.ts";
import { readAnswer } from "./read-answer.ts";
import { isEventStream, isResponseTo, sseMessages, SseResponseWatch } from "./mcp-sse.ts";

/** The revision asked for at initialize; the server's answer names the one spoken after. */
export const MCP_PROTOCOL_VERSION = "2025-06-18";
/**
 * Decoded bytes read of an answer to initialize or tools/list: a vendor's tool list with its input
 * schemas is tens of kilobytes; a quarter megabyte is ample and still bounds a hostile one.
 */
export const MAX_MCP_CONTROL_BYTES = 262_144;

export type RpcTarget = {
  endpoint: string;
  exchange: ProviderExchange;
  now: () => number;
};

export type RpcSend = {
  /** A request (with an id) or a notification (without). */
  message: { method: string; params?: Record<string, unknown>; id?: number };
  session: { id: string | null; version: string } | null;
  headers: Record<string, string>;
  signal: AbortSignal;
  budget: ByteBudget | null;
  cap: number;
  connectGate: Gate | null;
};

export type RpcOutcome =
  /** The response's `result`, and the session id the answer named (initialize's is kept). */
  | { kind: "result"; result: unknown; sessionId: string | null }
  /** A JSON-RPC error response. */
  | { kind: "rpc_error"; code: number; message: string }
  /** The server answered 404 to a request in a session: it forgot it; open a new one. */
  | { kind: "session_gone" }
  /** A notification the server accepted. */
  | { kind: "accepted" }
  | ({ kind: "failure" } & Failure);

/** Sends one message and reads its answer. */
export async function sendRpc(target: RpcTarget, send: RpcSend): Promise<RpcOutcome> {
  const { signal } = send;
  const failure = (f: Failure): RpcOutcome => ({ kind: "failure", ...f });
  const body = JSON.stringify({ jsonrpc: "2.0", ...send.message });
  let answer;
  let release: (() => void) | null = null;
  try {
    release = send.connectGate ? await send.connectGate.acquire(signal) : null;
    answer = await target.exchange(target.endpoint, {
      headers: {
        ...send.headers,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...(send.session === null ? {} : { "mcp-protocol-version": send.session.version }),
        ...(send.session?.id == null ? {} : { "mcp-session-id": send.session.id }),
      },
      body,
      signal,
    });
  } catch (error) {
    return failure(classifyThrown(error, "connect", signal));
  } finally {
    release?.();
  }
  try {
    if (answer.status === 404 && send.session?.id != null) {
      await answer.cancel();
      return { kind: "session_gone" };
    }
    if (send.message.id === undefined && answer.status >= 200 && answer.status < 300) {
      await answer.cancel();
      return { kind: "accepted" };
    }
    const sessionId = answer.header("mcp-session-id");
    const ok = answer.status >= 200 && answer.status < 300 && !answer.opaqueRedirect;
    let messages: unknown;
    if (ok && isEventStream(answer.header("content-type"))) {
      const watch = new SseResponseWatch(send.message.id);
      const read = await answer.read(send.cap, send.budget, (chunk) => watch.take(chunk));
      if (!read.ok) {
        return failure(
          read.reason === "too_large"
            ? protocolError(
              "body_too_large",
              `the body passed ${send.cap} decoded bytes and was cancelled`,
            )
            : protocolError(
              "search_budget_exceeded",
              "the search's decoded-byte budget ran out while reading this body",
            ),
        );
      }
      // Once the response has arrived the rest is given up: what was read may end mid-character.
      const text = watch.seen ? null : decodeUtf8(read.bytes);
      if (watch.invalid || (!watch.seen && text === null)) {
        return failure(protocolError("invalid_utf8", "the body is not valid UTF-8"));
      }
      messages = text === null ? watch.messages : sseMessages(text);
    } else {
      const read = await readAnswer(answer, { budget: send.budget, cap: send.cap, signal });
      if (read.kind === "unusable") return failure(protocolError(read.code, read.message));
      if (read.kind === "refused") {
        const wait = parseRetryAfter(answer.header("retry-after"), target.now());
        return failure(classifyStatus(read.status, readProviderError(read.body), wait));
      }
      messages = read.json;
    }
    return responseIn(messages, send.message.id, sessionId);
  } catch (error) {
    await answer.cancel();
    return failure(classifyThrown(error, "body", signal));
  }
}

/** The response to request `id` among what the server sent (one message, a batch, or events). */
function responseIn(sent: unknown, id: number | undefined, sessionId: string | null): RpcOutcome {
  const list = Array.isArray(sent) ? sent : [sent];
  const response = list.find((m) => isResponseTo(m, id));
  if (!isRecord(response)) {
    return {
      kind: "failure",
      ...protocolError(
        "schema_violation",
        "the MCP server's answer holds no JSON-RPC response to the request",
      ),
    };
  }
  if (isRecord(response.error)) {
    const code = typeof response.error.code === "number" ? response.error.code : 0;
    const message = typeof response.error.message === "string" ? response.error.message : "";
    return { kind: "rpc_error", code, message };
  }
  return { kind: "result", result: response.result, sessionId };
}
