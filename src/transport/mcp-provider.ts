/**
 * An MCP server's search tool as a provider (`transport: "mcp"`, docs/providers.md): each search is
 * a `tools/call` over Streamable HTTP (mcp-rpc.ts) whose result the entry's mapping turns into
 * candidates (mcp-answer.ts). The session is opened on the first call (initialize, then
 * notifications/initialized, then tools/list), kept by this client, so one per gateway instance,
 * and opened again when the server answers 404 for it.
 *
 * Invariants:
 * - The tool is checked against the server's `tools/list` before the first call; a server without
 *   it is `adapter_unavailable`, naming the tools it has, never an empty success.
 * - Every request of a call carries the call's signal, byte budget and headers (a minted token).
 * - Only search is spoken: describe answers from the manifest, every other action is unsupported.
 */
import { PROTOCOL_VERSIONS } from "../protocol/provider-actions.ts";
import { fillArguments, type McpMapping } from "../protocol/mcp-mapping.ts";
import { isRecord } from "../protocol/json-value.ts";
import { MAX_PROVIDER_BODY_BYTES } from "../protocol/limits.ts";
import { failed, type Failure, protocolError } from "./failure.ts";
import {
  MAX_MCP_CONTROL_BYTES,
  MCP_PROTOCOL_VERSION,
  type RpcOutcome,
  type RpcTarget,
  sendRpc,
} from "./mcp-rpc.ts";
import { answerFromToolResult } from "./mcp-answer.ts";
import type { ProviderCall, ProviderClient, TransportResult } from "./provider-client.ts";

/** tools/list pages followed at most: a server listing more tools than this is misconfigured. */
export const MAX_MCP_TOOL_PAGES = 10;
/** Tool names quoted in a message about a missing tool. */
const MAX_TOOLS_NAMED = 20;

export type McpProviderOptions = RpcTarget & {
  name: string;
  scope: string;
  mapping: McpMapping;
  /** The gateway's version, for initialize's clientInfo. */
  clientVersion: string;
  /** Extra headers (a bearer secret's authorization). */
  headers?: () => Record<string, string>;
};

type Session = { id: string | null; version: string; tools: string[] };
type Opened = { kind: "session"; session: Session } | ({ kind: "failure" } & Failure);

export function mcpProvider(options: McpProviderOptions): ProviderClient {
  let opening: Promise<Opened> | null = null;
  const unsupported = (action: string) =>
    Promise.resolve({
      kind: "unsupported" as const,
      message: `an MCP provider answers search only, not ${action}`,
    });

  /** The open session, opened by this call if none is; a failure is never kept. */
  async function session(call: ProviderCall, fresh: boolean): Promise<Opened> {
    if (fresh || opening === null) opening = open(options, call);
    let mine = opening;
    let opened = await mine;
    // Another call's deadline or departure may have ended the opening it shared: open again under
    // this call's own signal.
    const ended = opened.kind === "failure" &&
      (opened.outcome === "timeout" || opened.outcome === "cancelled");
    if (ended && !call.signal.aborted) {
      if (opening === mine) opening = open(options, call);
      mine = opening;
      opened = await mine;
    }
    if (opened.kind === "failure" && opening === mine) opening = null;
    return opened;
  }

  async function search(call: ProviderCall): Promise<TransportResult> {
    for (let attempt = 0; attempt < 2; attempt++) {
      const opened = await session(call, attempt > 0);
      if (opened.kind === "failure") return opened;
      const { tool } = options.mapping;
      if (!opened.session.tools.includes(tool)) {
        const named = opened.session.tools.slice(0, MAX_TOOLS_NAMED).join(", ");
        return {
          kind: "failure",
          ...failed(
            "adapter_unavailable",
            "adapter_unavailable",
            false,
            `the MCP server has no tool "${tool}"; it has: ${named || "none"}`,
          ),
        };
      }
      const args = fillArguments(options.mapping.arguments, call);
      const answer = await rpc(options, call, opened.session, MAX_PROVIDER_BODY_BYTES, {
        method: "tools/call",
        params: { name: tool, arguments: args },
        id: 3,
      });
      if (answer.kind === "session_gone") continue;
      if (answer.kind !== "result") return asFailure(answer, "tools/call");
      return answerFromToolResult(answer.result, options.mapping, options, call.limit);
    }
    return {
      kind: "failure",
      ...failed(
        "search_failed",
        "search_failed",
        true,
        "the MCP server forgot a new session at once",
      ),
    };
  }

  return {
    call: search,
    describe: () =>
      Promise.resolve({
        kind: "answer",
        answer: {
          provider: options.name,
          scope: options.scope,
          actions: ["search"],
          filters: [],
          protocol_versions: [...PROTOCOL_VERSIONS],
        },
      }),
    health: () => unsupported("health"),
    expand: () => unsupported("expand"),
    refresh: () => unsupported("refresh"),
    stats: () => unsupported("stats"),
  };
}

/** initialize, notifications/initialized, then every page of tools/list. */
async function open(o: McpProviderOptions, call: ProviderCall): Promise<Opened> {
  const init = await rpc(o, call, null, MAX_MCP_CONTROL_BYTES, {
    method: "initialize",
    params: {
      protocolVersion: MCP_PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: "tracefetch-gateway", version: o.clientVersion },
    },
    id: 1,
  });
  if (init.kind !== "result") return asFailure(init, "initialize");
  const version = isRecord(init.result) && typeof init.result.protocolVersion === "string"
    ? init.result.protocolVersion
    : MCP_PROTOCOL_VERSION;
  const session: Session = { id: init.sessionId, version, tools: [] };
  const note = await rpc(o, call, session, MAX_MCP_CONTROL_BYTES, {
    method: "notifications/initialized",
  });
  if (note.kind !== "accepted" && note.kind !== "result") return asFailure(note, "initialized");
  let cursor: string | undefined;
  for (let page = 0; page < MAX_MCP_TOOL_PAGES; page++) {
    const listed = await rpc(o, call, session, MAX_MCP_CONTROL_BYTES, {
      method: "tools/list",
      ...(cursor === undefined ? {} : { params: { cursor } }),
      id: 2,
    });
    if (listed.kind !== "result") return asFailure(listed, "tools/list");
    const result = isRecord(listed.result) ? listed.result : {};
    for (const tool of Array.isArray(result.tools) ? result.tools : []) {
      if (isRecord(tool) && typeof tool.name === "string") session.tools.push(tool.name);
    }
    cursor = typeof result.nextCursor === "string" ? result.nextCursor : undefined;
    if (cursor === undefined) break;
  }
  return { kind: "session", session };
}

function rpc(
  o: McpProviderOptions,
  call: ProviderCall,
  session: Session | null,
  cap: number,
  message: { method: string; params?: Record<string, unknown>; id?: number },
): Promise<RpcOutcome> {
  return sendRpc(o, {
    message,
    session,
    headers: {
      ...(o.headers ? o.headers() : {}),
      ...call.headers,
      "x-request-id": call.requestId,
      traceparent: call.traceparent,
    },
    signal: call.signal,
    budget: call.budget,
    cap,
    connectGate: call.connectGate,
  });
}

/** Anything but a result, as this call's failure. */
function asFailure(outcome: RpcOutcome, step: string): { kind: "failure" } & Failure {
  switch (outcome.kind) {
    case "failure":
      return outcome;
    case "rpc_error":
      return {
        kind: "failure",
        ...failed(
          "search_failed",
          "search_failed",
          false,
          `the MCP server refused ${step} (JSON-RPC error ${outcome.code}): ${outcome.message}`,
        ),
      };
    case "session_gone":
      return {
        kind: "failure",
        ...failed(
          "search_failed",
          "search_failed",
          true,
          `the MCP server forgot the session during ${step}`,
        ),
      };
    case "accepted":
    case "result":
      return {
        kind: "failure",
        ...protocolError(
          "schema_violation",
          `the MCP server's answer to ${step} is not a response`,
        ),
      };
    default: {
      const never: never = outcome;
      throw new Error(`unhandled outcome ${JSON.stringify(never)}`);
    }
  }
}
