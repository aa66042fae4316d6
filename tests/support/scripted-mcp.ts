/**
 * A small MCP server over Streamable HTTP on 127.0.0.1 whose every answer a test chooses: sessions
 * it issues and can forget (404, as the transport says), JSON or SSE answers, a tool that holds or
 * answers what the test sets. Real HTTP through tests/support/servers.ts, so the gateway's own
 * client is what talks to it.
 */
import { type Handler, startServer, type TestServer } from "./servers.ts";

export type ToolAnswer = (args: Record<string, unknown>) => unknown;

export type ScriptedMcp = TestServer & {
  /** The endpoint (`/mcp`). */
  endpoint: string;
  /** Forget every session: the next request in one gets 404. */
  forget: () => void;
  sessionsOpened: () => number;
  /** Each tools/call's arguments and headers, in order. */
  calls: Array<{ args: Record<string, unknown>; headers: Record<string, unknown> }>;
  /**
   * What tools/call answers (a CallToolResult); undefined holds the request open. With `keepOpen`
   * an SSE answer is written a few bytes at a time and its stream is never ended by the server.
   */
  tool: { answer: ToolAnswer | undefined; sse: boolean; delayMs: number; keepOpen: boolean };
  /** SSE answers whose connection closed before the server ended them (the client gave up). */
  streamsCutByClient: () => number;
  /** How many initialize requests to refuse with 503 before accepting one. */
  refuseOpenings: { count: number };
  /** The most tools/call requests the server held at once. */
  mostAtOnce: () => number;
};

export async function startScriptedMcp(tools: string[] = ["find"]): Promise<ScriptedMcp> {
  let sessions = new Set<string>();
  let opened = 0;
  const calls: ScriptedMcp["calls"] = [];
  const tool: ScriptedMcp["tool"] = {
    answer: () => ({ structuredContent: { hits: [] }, content: [] }),
    sse: false,
    delayMs: 0,
    keepOpen: false,
  };
  let cut = 0;
  const refuseOpenings = { count: 0 };
  let open = 0;
  let most = 0;
  const handler: Handler = (req, res, body): void => {
    const message = JSON.parse(body);
    const send = (result: unknown, sse: boolean, extra: Record<string, string> = {}) => {
      const text = JSON.stringify({ jsonrpc: "2.0", id: message.id, result });
      if (sse) {
        res.writeHead(200, { "content-type": "text/event-stream", ...extra });
        // A notification before the response, as a server that logs or reports progress sends.
        const note = JSON.stringify({
          jsonrpc: "2.0",
          method: "notifications/message",
          params: { level: "info", data: "working" },
        });
        const stream = `event: message\ndata: ${note}\n\nevent: message\ndata: ${text}\n\n`;
        if (!tool.keepOpen) return void res.end(stream);
        // Pieces of 5 bytes split characters and line ends; the stream then stays open.
        res.on("close", () => {
          if (!res.writableEnded) cut++;
        });
        const bytes = Buffer.from(stream);
        const write = (at: number) => {
          if (at >= bytes.length || res.destroyed) return;
          res.write(bytes.subarray(at, at + 5));
          setTimeout(() => write(at + 5), 1);
        };
        write(0);
      } else {
        res.writeHead(200, { "content-type": "application/json", ...extra });
        res.end(text);
      }
    };
    if (message.method === "initialize" && refuseOpenings.count > 0) {
      refuseOpenings.count--;
      res.writeHead(503, { "content-type": "text/plain" });
      res.end("starting");
      return;
    }
    if (message.method === "initialize") {
      const id = `s-${++opened}`;
      sessions.add(id);
      return send(
        {
          protocolVersion: "2025-06-18",
          capabilities: { tools: {} },
          serverInfo: { name: "scripted", version: "1" },
        },
        false,
        { "mcp-session-id": id },
      );
    }
    const session = req.headers["mcp-session-id"];
    if (typeof session !== "string" || !sessions.has(session)) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({
        jsonrpc: "2.0",
        id: message.id ?? null,
        error: { code: -32001, message: "Session not found" },
      }));
      return;
    }
    if (message.method === "notifications/initialized") {
      res.writeHead(202);
      res.end();
      return;
    }
    if (message.method === "tools/list") {
      return send(
        { tools: tools.map((name) => ({ name, inputSchema: { type: "object" } })) },
        true,
      );
    }
    if (message.method === "tools/call") {
      calls.push({ args: message.params.arguments, headers: { ...req.headers } });
      const answer = tool.answer;
      if (answer === undefined) return; // held until the client gives up
      open++;
      most = Math.max(most, open);
      setTimeout(() => {
        open--;
        send(answer(message.params.arguments), tool.sse);
      }, tool.delayMs);
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "nope" } }),
    );
  };
  const server = await startServer(handler);
  return {
    ...server,
    endpoint: server.url.replace(/\/search$/, "/mcp"),
    forget: () => {
      sessions = new Set();
    },
    sessionsOpened: () => opened,
    calls,
    tool,
    mostAtOnce: () => most,
    streamsCutByClient: () => cut,
    refuseOpenings,
  };
}
