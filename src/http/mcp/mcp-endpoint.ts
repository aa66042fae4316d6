/**
 * The MCP endpoint (docs/mcp.md): `POST /mcp` speaks MCP's Streamable HTTP transport through the
 * official SDK's low-level `Server` and its web-standard transport, stateless, with six tools:
 * `search`, `expand`, `fetch`, `verify`, `providers` and `status`. createGateway loads this module with the first
 * `/mcp` request, so on Workers it is a module of its own that searches never load.
 *
 * Boundary: this module translates between JSON-RPC and the gateway. It plans, ranks, validates
 * and authenticates nothing itself: the caller was resolved by the caller middleware (an invalid
 * token never gets here), tool arguments meet the parsers the routes use, and every answer is the
 * envelope the matching route would give.
 *
 * Invariants:
 * - A request whose Origin is not allowed is refused (403) before its token is read or any tool
 *   runs; a request without Origin (not from a browser) is allowed.
 * - No session: every POST gets a Server and a transport of its own, so nothing of one caller
 *   outlives its request or reaches another's.
 * - A call answers JSON unless it carries a progress token; then its answer is an SSE stream with
 *   one progress notification per provider as it answers, then the result.
 * - `structuredContent` validates against the tool's `outputSchema` (schemas/mcp-tools.json),
 *   failures included: `isError` with the envelope's `code`, `action` and `retry_after_ms`.
 * - Params are checked before the SDK reads them, and a tool reads its arguments as the body held
 *   them (mcp-params.ts); a search's trace is recorded as the search routes record it.
 */
import type { Context } from "hono";
// The SDK's catch-all export maps `x.js` to types at `x.js.d.ts`, which do not exist; TypeScript
// falls back to `x.d.ts` by itself, Deno only with @ts-types naming the subpath without `.js`.
// @ts-types="@modelcontextprotocol/sdk/server/index"
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
// @ts-types="@modelcontextprotocol/sdk/server/webStandardStreamableHttp"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation";
import toolList from "../../../schemas/mcp-tools.json" with { type: "json" };
import { MCP_TOOL_NAMES, type McpToolName } from "../../protocol/mcp-tools.ts";
import { isLoopbackHost } from "../../protocol/url-policy.ts";
import { isRecord } from "../../protocol/json-value.ts";
import { problemEnvelope } from "../../envelope/build-envelope.ts";
import type { GatewayState } from "../../gateway/gateway-state.ts";
import type { ResolvedConfig } from "../../config/gateway-config.ts";
import { VERSION } from "../../protocol/version.ts";
import { decodeUtf8 } from "../../io/bounded-reader.ts";
import type { GatewayEnv } from "../caller-middleware.ts";
import { afterAnswer } from "../after-answer.ts";
import { NO_SNIFF, problemResponse } from "../respond.ts";
import { callTool, type ToolCaller, type ToolEnvelope } from "./mcp-tool-calls.ts";
import type { EvidencePorts } from "../fetch-route.ts";
import { CallArguments, checkParamsFirst } from "./mcp-params.ts";
import { toolText } from "./mcp-text.ts";

/**
 * Generated from src/protocol/mcp-tools.ts by `npm run gen:schemas` in the shape MCP lists tools
 * (scripts/gen-mcp-tools.ts); JSON's inferred types are wider than the SDK's literal ones.
 */
const TOOLS = toolList.tools as unknown as Tool[];

const INSTRUCTIONS =
  "TraceFetch Edge: one search fans out to many providers and comes back as one fused list. Call search first; each merged entry's found_by names the providers that found it, which expand takes with the entry's locator. Read ok, code and action in every answer: action says what to do next (fix_input, login, check_access, retry, report).";

/**
 * The server never validates against a schema itself (it would only for elicitation, which it
 * never asks): this spares the SDK's default validator, which compiles code at run time, as
 * Workers forbid.
 */
const NO_VALIDATION: jsonSchemaValidator = {
  getValidator: () => () => ({
    valid: false,
    data: undefined,
    errorMessage: "this server validates no schema",
  }),
};

/**
 * Whether `/mcp` accepts a request with this Origin (MCP's guard against DNS rebinding): none
 * (not a browser), one listed in TRACEFETCH_MCP_ORIGINS, or a loopback origin on a development
 * setup. The gateway's own origin is not implied: under DNS rebinding a hostile page's origin
 * is the very host the browser was sent to.
 */
export function originRefusal(
  origin: string | undefined,
  config: ResolvedConfig,
  requestId: string,
): Response | null {
  if (origin === undefined || config.mcpOrigins.includes(origin)) return null;
  if (config.allowLoopback && isLoopbackOrigin(origin)) return null;
  return problemResponse(
    "unknown",
    "forbidden",
    requestId,
    "this Origin may not call /mcp; an operator lists the origins it accepts in TRACEFETCH_MCP_ORIGINS",
  );
}

function isLoopbackOrigin(origin: string): boolean {
  try {
    const url = new URL(origin);
    return (url.protocol === "http:" || url.protocol === "https:") &&
      isLoopbackHost(url.hostname) && url.origin === origin;
  } catch {
    return false;
  }
}

/** Answers one `POST /mcp` whose body was read within the gateway's cap and deadline. */
export async function answerMcp(
  c: Context<GatewayEnv>,
  state: GatewayState,
  body: Uint8Array,
  evidence: EvidencePorts | null = null,
): Promise<Response> {
  const requestId = c.get("requestId");
  const message = parseJson(body);
  if (message === undefined) {
    return jsonRpcError(400, ErrorCode.ParseError, "Parse error: the body is not UTF-8 JSON");
  }
  // JSON-RPC 2.0 answers an empty batch with one Invalid Request error; the SDK would take it as
  // a batch of notifications and answer 202 with nothing.
  if (Array.isArray(message) && message.length === 0) {
    return jsonRpcError(400, ErrorCode.InvalidRequest, "Invalid Request: the batch is empty");
  }
  const who: ToolCaller = {
    state,
    caller: c.get("caller"),
    client: c.get("clientAddress"),
    requestId,
    later: afterAnswer(c),
    evidence,
    span: c.get("span"),
  };
  const calls = new CallArguments();
  const server = serverFor(who, c.req.raw.signal, calls);
  const transport = new WebStandardStreamableHTTPServerTransport({
    // No sessionIdGenerator: stateless, no Mcp-Session-Id.
    enableJsonResponse: !asksForProgress(message),
    keepAliveMs: state.config.heartbeatMs,
  });
  await server.connect(transport);
  checkParamsFirst(transport, calls);
  const response = await transport.handleRequest(c.req.raw, { parsedBody: message });
  response.headers.set("x-request-id", requestId);
  response.headers.set("cache-control", "no-store");
  response.headers.set("x-content-type-options", NO_SNIFF["x-content-type-options"]);
  return response;
}

function serverFor(who: ToolCaller, gone: AbortSignal, calls: CallArguments): Server {
  const server = new Server(
    { name: "tracefetch-edge", version: VERSION },
    { capabilities: { tools: {} }, instructions: INSTRUCTIONS, jsonSchemaValidator: NO_VALIDATION },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    // Taken first, before any await or refusal: handlers start in the order of the messages.
    const args = calls.take(extra.requestId) ?? request.params.arguments ?? {};
    const name = request.params.name;
    if (!isToolName(name)) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `unknown tool; the tools are ${MCP_TOOL_NAMES.join(", ")}`,
      );
    }
    // The MCP semantic conventions' span name and attributes.
    who.span?.rename(`tools/call ${name}`, {
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": name,
    });
    const token = extra._meta?.progressToken;
    let notified: Promise<unknown> = Promise.resolve();
    const onProgress = token === undefined
      ? null
      : (progress: number, total: number, message: string) => {
        notified = notified.then(() =>
          extra.sendNotification({
            method: "notifications/progress",
            params: { progressToken: token, progress, total, message },
          })
        ).catch(() => {});
      };
    const output = await runTool(
      name,
      args,
      who,
      AbortSignal.any([extra.signal, gone]),
      onProgress,
    );
    // Every notification goes out before the result, which ends the stream.
    await notified;
    return toolResult(output);
  });
  return server;
}

async function runTool(
  name: McpToolName,
  args: Record<string, unknown>,
  who: ToolCaller,
  signal: AbortSignal,
  onProgress: Parameters<typeof callTool>[4],
): Promise<ToolEnvelope> {
  try {
    return await callTool(name, args, who, signal, onProgress);
  } catch (error) {
    console.error(`[${who.requestId}] internal error in MCP tool ${name}:`, error);
    return problemEnvelope(
      name,
      "internal_error",
      who.requestId,
      "the gateway hit an internal fault; report the request_id",
    );
  }
}

function toolResult(output: ToolEnvelope): CallToolResult {
  return {
    content: [{ type: "text", text: toolText(output) }],
    structuredContent: output,
    isError: !output.ok,
  };
}

function isToolName(name: string): name is McpToolName {
  return (MCP_TOOL_NAMES as readonly string[]).includes(name);
}

/** The body as JSON, or undefined when it is not UTF-8 JSON. */
function parseJson(body: Uint8Array): unknown {
  const text = decodeUtf8(body);
  if (text === null) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Whether any request in the message (one, or a batch) carries a progress token. */
function asksForProgress(message: unknown): boolean {
  const messages = Array.isArray(message) ? message : [message];
  return messages.some((m) =>
    isRecord(m) && isRecord(m.params) && isRecord(m.params._meta) &&
    m.params._meta.progressToken !== undefined && m.id !== undefined
  );
}

/** A JSON-RPC error with no id, as the transport answers a message it cannot read. */
function jsonRpcError(status: number, code: number, message: string): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }), {
    status,
    headers: { "content-type": "application/json", "cache-control": "no-store", ...NO_SNIFF },
  });
}
