/**
 * runMcpConformance(endpoint, options): an MCP provider entry (`transport: "mcp"`) checked the way
 * the gateway would use it, one JSON-RPC exchange per case, each reported with its request, its
 * answer and its verdict, in the report formatTranscript prints. The tool's answers are judged by
 * the gateway's own mapping (src/transport/mcp-answer.ts), so a pass here is a success there.
 */
import { DEFAULT_CONFORMANCE_QUERY } from "../protocol/limits.ts";
import { isRecord } from "../protocol/json-value.ts";
import { fillArguments, type McpMapping } from "../protocol/mcp-mapping.ts";
import { endpointProblem } from "../protocol/url-policy.ts";
import { redact } from "../io/redact.ts";
import { MCP_PROTOCOL_VERSION } from "../transport/mcp-rpc.ts";
import { isEventStream, sseMessages } from "../transport/mcp-sse.ts";
import { answerFromToolResult } from "../transport/mcp-answer.ts";
import type { Judgement } from "./conformance-cases.ts";
import { type Answer, type ConformanceReport, ConformanceRun, hex } from "./conformance-run.ts";
import { NONSENSE_QUERY_PREFIX } from "./conformance.ts";

export const MCP_CONFORMANCE_CASES = [
  "mcp-initialize",
  "mcp-initialized",
  "mcp-tool-listed",
  "mcp-search",
  "mcp-limit",
  "mcp-honest-empty",
] as const;
export type McpConformanceCaseName = (typeof MCP_CONFORMANCE_CASES)[number];

export type McpConformanceOptions = {
  name: string;
  scope: string;
  mapping: McpMapping;
  fetch?: typeof fetch;
  /** Per request, from sending it to the end of its body. */
  timeoutMs?: number;
  /** Sent with every request (authorization); their values never appear in a report. */
  headers?: Record<string, string>;
  query?: string;
};

/** The JSON-RPC messages of an answer: its JSON body, or its SSE events' data. */
function messagesOf(answer: Answer): unknown[] {
  const sse = isEventStream(answer.response.content_type);
  const json = sse ? sseMessages(answer.text ?? "") : answer.json;
  return json === undefined ? [] : Array.isArray(json) ? json : [json];
}

export async function runMcpConformance(
  endpoint: string,
  options: McpConformanceOptions,
): Promise<ConformanceReport> {
  const problem = endpointProblem(endpoint, true);
  if (problem !== null) throw new TypeError(`the endpoint ${problem}`);
  const query = options.query ?? DEFAULT_CONFORMANCE_QUERY;
  const { mapping } = options;
  const declared = { name: options.name, scope: options.scope };
  const run = new ConformanceRun(endpoint, options);
  let session: string | null = null;
  let version: string | null = null;
  let id = 0;
  const exchange = async (
    name: McpConformanceCaseName,
    expects: string,
    message: { method: string; params?: Record<string, unknown> },
    judge: (answer: Answer, result: unknown) => Judgement,
    notification = false,
  ) => {
    const body = JSON.stringify({
      jsonrpc: "2.0",
      ...(notification ? {} : { id: ++id }),
      ...message,
    });
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(session === null ? {} : { "mcp-session-id": session }),
      ...(version === null ? {} : { "mcp-protocol-version": version }),
    };
    const { passed } = await run.run({
      case: name,
      expects,
      headers,
      body,
      ...(notification ? {} : { responseTo: id }),
      judge: (answer) => {
        session = answer.headers.get("mcp-session-id") ?? session;
        const { status } = answer.response;
        if (status >= 300) return { fail: [`HTTP ${status}`], advice: [] };
        if (notification) return judge(answer, undefined);
        const response = messagesOf(answer).find((m) => isRecord(m) && m.id === id);
        if (!isRecord(response)) {
          return { fail: ["the answer holds no JSON-RPC response to the request"], advice: [] };
        }
        if (isRecord(response.error)) {
          return {
            fail: [`JSON-RPC error: ${redact(JSON.stringify(response.error))}`],
            advice: [],
          };
        }
        return judge(answer, response.result);
      },
    });
    return passed;
  };
  const pass = { fail: [], advice: [] };
  const call = (q: string, limit: number) => ({
    method: "tools/call",
    params: {
      name: mapping.tool,
      arguments: fillArguments(mapping.arguments, { query: q, limit }),
    },
  });

  const opened = await exchange(
    "mcp-initialize",
    "initialize answers a result naming the protocol revision it speaks",
    {
      method: "initialize",
      params: {
        protocolVersion: MCP_PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: "tracefetch-conformance", version: "1" },
      },
    },
    (_sent, result) => {
      if (!isRecord(result) || typeof result.protocolVersion !== "string") {
        return { fail: ["the result names no protocolVersion"], advice: [] };
      }
      version = result.protocolVersion;
      return pass;
    },
  );
  if (opened) {
    await exchange(
      "mcp-initialized",
      "notifications/initialized is accepted (202 or another 2xx)",
      {
        method: "notifications/initialized",
      },
      (sent) => {
        const status = sent.response?.status ?? 0;
        return status >= 200 && status < 300 ? pass : { fail: [`HTTP ${status}`], advice: [] };
      },
      true,
    );
    const listed = await exchange(
      "mcp-tool-listed",
      `tools/list names the tool "${mapping.tool}"`,
      {
        method: "tools/list",
      },
      (_sent, result) => {
        const tools = isRecord(result) && Array.isArray(result.tools)
          ? result.tools.filter(isRecord).map((t) => String(t.name))
          : [];
        return tools.includes(mapping.tool) ? pass : {
          fail: [
            `no tool "${mapping.tool}" among ${tools.length} (${
              tools.slice(0, 20).join(", ")
            }); the gateway reports adapter_unavailable`,
          ],
          advice: [],
        };
      },
    );
    if (listed) {
      await exchange(
        "mcp-search",
        `a search for ${JSON.stringify(query)} maps to at least one valid candidate`,
        call(query, 10),
        (_sent, result) => {
          const mapped = answerFromToolResult(result, mapping, declared, 10);
          if (mapped.kind === "failure") {
            return { fail: [`${mapped.code}: ${mapped.message}`], advice: [] };
          }
          return mapped.candidates.length > 0 ? pass : {
            fail: [],
            advice: [
              `nothing found for ${
                JSON.stringify(query)
              }: pass --query with words the server holds`,
            ],
          };
        },
      );
      await exchange(
        "mcp-limit",
        "a search with limit 1 maps, and the tool is told the limit",
        call(query, 1),
        (_sent, result) => {
          const mapped = answerFromToolResult(result, mapping, declared, Number.MAX_SAFE_INTEGER);
          if (mapped.kind === "failure") {
            return { fail: [`${mapped.code}: ${mapped.message}`], advice: [] };
          }
          const advice = [];
          if (!JSON.stringify(mapping.arguments).includes('"{limit}"')) {
            advice.push(
              'the arguments pass no "{limit}": the gateway keeps the first results the tool sends',
            );
          } else if (mapped.candidates.length > 1) {
            advice.push(
              `the tool sent ${mapped.candidates.length} results for limit 1; the gateway keeps the first`,
            );
          }
          return { fail: [], advice };
        },
      );
      await exchange(
        "mcp-honest-empty",
        "a query nothing matches is a list, possibly empty, never isError",
        call(`${NONSENSE_QUERY_PREFIX}${hex(8)}`, 10),
        (_sent, result) => {
          const mapped = answerFromToolResult(result, mapping, declared, 10);
          if (mapped.kind === "failure") {
            return { fail: [`${mapped.code}: ${mapped.message}`], advice: [] };
          }
          return mapped.candidates.length === 0 ? pass : {
            fail: [],
            advice: [`${mapped.candidates.length} results for a nonsense query`],
          };
        },
      );
    }
  }
  return run.report(
    { name: options.name, scope: options.scope, reported: null, query },
    MCP_CONFORMANCE_CASES.length,
  );
}
