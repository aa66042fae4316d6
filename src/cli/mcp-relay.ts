/**
 * MCP's stdio transport (newline-delimited JSON-RPC on stdin and stdout) relayed to a gateway's
 * Streamable HTTP `/mcp`: each message a client writes is one POST, and whatever the gateway
 * answers (JSON, or an SSE stream with progress notifications before the result) is written back
 * as lines, each event as it arrives. So a desktop client that only runs commands gets the tools
 * and text of `/mcp` itself.
 *
 * Invariants:
 * - stdout carries JSON-RPC messages only, one per line; every diagnostic goes to `log` (stderr).
 * - A request gets an answer unless it was cancelled: when the gateway cannot be reached or answers
 *   no JSON-RPC, a JSON-RPC error response for its id.
 * - `notifications/cancelled` aborts the POST of the request it names; the end of stdin aborts
 *   every POST still in flight.
 * - No line from the client, and no event from the gateway, is kept past MAX_MCP_RELAY_LINE_BYTES.
 */
import { isRecord, parseJson } from "../protocol/json-value.ts";

/**
 * The largest message relayed either way: the gateway's own request body limit is 1 MiB and a
 * search tool's answer is a few hundred kilobytes; 8 MiB bounds a runaway peer, not a real answer.
 */
export const MAX_MCP_RELAY_LINE_BYTES = 8 * 1024 * 1024;

export type Relay = {
  /** POSTs one JSON-RPC message to `/mcp`. */
  post: (body: string, headers: Record<string, string>, signal: AbortSignal) => Promise<Response>;
  /** Headers every POST carries (the token). */
  headers: Record<string, string>;
  /** Writes one line of JSON-RPC to stdout. */
  write: (line: string) => void;
  /** A diagnostic line, for stderr. */
  log: (line: string) => void;
};

/** Relays until stdin ends, then waits for the answers in flight (aborted) to be written. */
export async function relayStdio(input: ReadableStream<Uint8Array>, relay: Relay): Promise<void> {
  const inFlight = new Map<unknown, AbortController>();
  const pending = new Set<Promise<void>>();
  let session: string | null = null;
  let version: string | null = null;
  const send = async (message: Record<string, unknown>, line: string) => {
    const controller = new AbortController();
    const isRequest = "id" in message && "method" in message;
    if (isRequest) inFlight.set(message.id, controller);
    try {
      const response = await relay.post(line, {
        ...relay.headers,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...(session === null ? {} : { "mcp-session-id": session }),
        ...(version === null ? {} : { "mcp-protocol-version": version }),
      }, controller.signal);
      session = response.headers.get("mcp-session-id") ?? session;
      let answered = false;
      for await (const out of messagesOf(response, controller.signal)) {
        if (isRecord(out) && out.id === message.id && ("result" in out || "error" in out)) {
          answered = true;
          if (message.method === "initialize" && isRecord(out.result)) {
            const v = out.result.protocolVersion;
            if (typeof v === "string") version = v;
          }
        }
        relay.write(JSON.stringify(out));
      }
      if (isRequest && !answered && !controller.signal.aborted) {
        failed(
          message.id,
          `the gateway answered HTTP ${response.status} with no JSON-RPC response`,
        );
      }
    } catch (error) {
      // A request the client cancelled (or left with stdin's end) is answered by no one (MCP,
      // "Cancellation").
      if (controller.signal.aborted) return;
      if (isRequest) {
        failed(
          message.id,
          `the gateway could not be reached (${(error as Error)?.message ?? error})`,
        );
      } else {
        relay.log(
          `tracefetch mcp: ${String(message.method)} not delivered: ${(error as Error)?.message}`,
        );
      }
    } finally {
      inFlight.delete(message.id);
    }
  };
  const failed = (id: unknown, text: string) => {
    relay.log(`tracefetch mcp: ${text}`);
    relay.write(JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32603, message: text } }));
  };
  for await (const line of lines(input)) {
    if (line.trim() === "") continue;
    const message = parseJson(line);
    if (!isRecord(message)) {
      relay.write(
        JSON.stringify({
          jsonrpc: "2.0",
          id: null,
          error: { code: -32700, message: "Parse error" },
        }),
      );
      continue;
    }
    if (message.method === "notifications/cancelled" && isRecord(message.params)) {
      inFlight.get(message.params.requestId)?.abort();
      continue;
    }
    const task = send(message, line).finally(() => pending.delete(task));
    pending.add(task);
  }
  for (const controller of inFlight.values()) controller.abort();
  await Promise.all(pending);
}

/** The JSON-RPC messages of an answer: a JSON body (one or a batch), or an SSE stream's events. */
async function* messagesOf(response: Response, signal: AbortSignal): AsyncGenerator<unknown> {
  const type = response.headers.get("content-type") ?? "";
  if (response.body === null) return;
  if (/^text\/event-stream/i.test(type)) {
    let data: string[] = [];
    for await (const line of lines(response.body, signal)) {
      if (line === "" || line === "\r") {
        const json = data.length === 0 ? undefined : parseJson(data.join("\n"));
        data = [];
        if (json !== undefined) yield json;
      } else if (line.startsWith("data:")) {
        data.push(line.slice(line.startsWith("data: ") ? 6 : 5).replace(/\r$/, ""));
      }
    }
    return;
  }
  let text = "";
  for await (const line of lines(response.body, signal)) text += `${line}\n`;
  const json = parseJson(text);
  if (json === undefined) return;
  yield* Array.isArray(json) ? json : [json];
}

/** A byte stream's lines (without their `\n`), none longer than the relay's cap. */
async function* lines(
  stream: ReadableStream<Uint8Array>,
  signal?: AbortSignal,
): AsyncGenerator<string> {
  const decoder = new TextDecoderStream() as unknown as ReadableWritablePair<string, Uint8Array>;
  const reader = stream.pipeThrough(decoder).getReader();
  const stop = () => void reader.cancel().catch(() => {});
  signal?.addEventListener("abort", stop, { once: true });
  let buffer = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += value;
      let at;
      while ((at = buffer.indexOf("\n")) !== -1) {
        yield buffer.slice(0, at);
        buffer = buffer.slice(at + 1);
      }
      if (buffer.length > MAX_MCP_RELAY_LINE_BYTES) {
        throw new Error(`a message passed ${MAX_MCP_RELAY_LINE_BYTES} bytes`);
      }
    }
    if (buffer !== "") yield buffer;
  } finally {
    signal?.removeEventListener("abort", stop);
    reader.releaseLock();
  }
}
