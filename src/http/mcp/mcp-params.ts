/**
 * Each request's params, read before the SDK reads them. The SDK parses a request with its zod
 * schema inside the handler's call, so a failure answers -32603 Internal error with zod's issue list
 * as its message; and it rebuilds `tools/call` arguments key by key, which loses a `__proto__` key
 * (assigned, it sets the prototype) that POST /v1/search refuses as `unknown_field`.
 *
 * Boundary: this sits between the transport and the SDK's `Server`, after the transport's checks of
 * the HTTP exchange (media types, protocol version, JSON-RPC shape). It answers nothing but a request
 * whose params the method's schema refuses; every other message goes on unchanged.
 *
 * Invariants:
 * - A request of a method the server answers reaches the SDK only when its schema accepts the params
 *   (the same schema the SDK parses it with), so no parse of params fails inside the SDK.
 * - A refusal is -32602 Invalid params naming the field, worded here, never a library's message.
 * - A `tools/call` handler gets its arguments as the body's JSON held them, every key kept.
 */
// For Deno, which does not find these subpaths' types by itself (see mcp-endpoint.ts).
// @ts-types="@modelcontextprotocol/sdk/shared/transport"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  CallToolRequestSchema,
  ErrorCode,
  InitializeRequestSchema,
  isJSONRPCRequest,
  type JSONRPCMessage,
  ListToolsRequestSchema,
  PingRequestSchema,
  type RequestId,
} from "@modelcontextprotocol/sdk/types.js";
import { isRecord } from "../../protocol/json-value.ts";

/** What the endpoint needs of a schema's verdict: the first issue's place and kind. */
type Issue = { code: string; path: PropertyKey[]; expected?: string };
type ParamsSchema = {
  safeParse(value: unknown): { success: true } | { success: false; error: { issues: Issue[] } };
};

/**
 * Every request method the server answers (the SDK's own `initialize` and `ping`, the endpoint's
 * `tools/list` and `tools/call`), with the schema the SDK parses it with. The SDK answers any other
 * method -32601 before it reads params.
 */
const SERVED: Record<string, ParamsSchema> = {
  initialize: InitializeRequestSchema,
  ping: PingRequestSchema,
  "tools/list": ListToolsRequestSchema,
  "tools/call": CallToolRequestSchema,
};

/** How a refusal names the type a field must have. */
const TYPE_NAMES: Record<string, string> = {
  object: "an object",
  record: "an object",
  array: "an array",
  string: "a string",
  number: "a number",
  int: "an integer",
  boolean: "a boolean",
};

/**
 * The arguments of this request's `tools/call` messages, by request id, as their JSON held them.
 * A list per id because nothing stops a batch repeating one; each handler takes the first left,
 * as handlers start in the order of the messages.
 */
export class CallArguments {
  readonly #held = new Map<RequestId, Array<Record<string, unknown>>>();

  hold(id: RequestId, args: Record<string, unknown>): void {
    const list = this.#held.get(id);
    if (list === undefined) this.#held.set(id, [args]);
    else list.push(args);
  }

  take(id: RequestId): Record<string, unknown> | undefined {
    return this.#held.get(id)?.shift();
  }
}

/**
 * Puts the params check in front of the handler the SDK's `Server` gave `transport` when it
 * connected, and holds each `tools/call`'s arguments in `calls`.
 */
export function checkParamsFirst(transport: Transport, calls: CallArguments): void {
  const deliver = transport.onmessage;
  transport.onmessage = <T extends JSONRPCMessage>(
    message: T,
    extra?: Parameters<NonNullable<Transport["onmessage"]>>[1],
  ) => {
    if (isJSONRPCRequest(message)) {
      const refusal = paramsRefusal(message);
      if (refusal !== null) {
        transport.send({
          jsonrpc: "2.0",
          id: message.id,
          error: { code: ErrorCode.InvalidParams, message: refusal },
        }).catch(() => {
          // Only a caller who left makes the send fail: no one is there to answer.
        });
        return;
      }
      // The transport's own parse keeps `params`' unknown members as they were, arguments included.
      const args = message.params?.arguments;
      if (message.method === "tools/call" && isRecord(args)) calls.hold(message.id, args);
    }
    deliver?.(message, extra);
  };
}

/** Why the method's schema refuses the request's params, in a line; null when it accepts them. */
function paramsRefusal(request: { method: string }): string | null {
  const schema = Object.hasOwn(SERVED, request.method) ? SERVED[request.method] : undefined;
  const verdict = schema?.safeParse(request);
  if (verdict === undefined || verdict.success) return null;
  const issue = verdict.error.issues[0];
  if (issue === undefined) return "Invalid params";
  const field = issue.path.map(String).join(".");
  if (valueAt(request, issue.path) === undefined) return `Invalid params: ${field} is required`;
  const type = issue.code === "invalid_type" && issue.expected !== undefined
    ? TYPE_NAMES[issue.expected] ?? issue.expected
    : undefined;
  return type === undefined
    ? `Invalid params: ${field} is not valid`
    : `Invalid params: ${field} must be ${type}`;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let at = root;
  for (const key of path) {
    if (typeof at !== "object" || at === null || !Object.hasOwn(at, key)) return undefined;
    at = (at as Record<PropertyKey, unknown>)[key];
  }
  return at;
}
