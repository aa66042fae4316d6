/**
 * What `/mcp` answers to input a well-behaved client does not send, and what a search through it
 * leaves behind, in every runtime (tests/mcp.test.ts on Node and Deno, tests/workerd/mcp.test.ts):
 * an empty batch, a `__proto__` key among a tool's arguments, params the method's schema refuses,
 * and the search trace. The SDK's own client sends what it can; raw HTTP sends the rest.
 */
import { it } from "node:test";
import assert from "node:assert/strict";
import * as v from "valibot";
import { base64url } from "jose";
// For Deno, which does not find these subpaths' types by itself (see src/http/mcp/mcp-endpoint.ts).
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  CallToolResultSchema,
  ErrorCode,
  ListToolsResultSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { type Trace, TraceBatchSchema } from "../../src/protocol/trace-schema.ts";
import { assertEnvelope } from "./gateway.ts";
import { eventually } from "./mining-fixture.ts";
import { assertToolOutput, connect, type McpSetup, rpc } from "./mcp.ts";

type JsonRpcError = { jsonrpc: string; id: unknown; error: { code: number; message: string } };

/** The traces the webhook took so far (each body a JWS; the mining tests verify signatures). */
function tracesOf(setup: McpSetup): Trace[] {
  return setup.traces.taken.flatMap((jws) => {
    const payload = new TextDecoder().decode(base64url.decode(jws.split(".")[1] ?? ""));
    return v.parse(TraceBatchSchema, JSON.parse(payload)).traces as Trace[];
  });
}

/** A trace without what differs from one run of a search to the next: its id, time and timings. */
function comparable(trace: Trace): unknown {
  const { request_id: _id, time: _time, attempts, ...rest } = trace;
  return { ...rest, attempts: attempts.map(({ latency_ms: _l, ...attempt }) => attempt) };
}

export function mcpInputCases(target: () => { mcp: URL; setup: McpSetup }): void {
  it("an empty batch is one Invalid Request error (-32600) with status 400, as JSON-RPC 2.0 asks, never a silent 202", async () => {
    const res = await rpc(target().mcp, "[]");
    assert.equal(res.status, 400);
    assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
    const body = await res.json() as JsonRpcError;
    assert.deepEqual([body.jsonrpc, body.id, body.error.code], ["2.0", null, -32600]);
    assert.match(body.error.message, /^Invalid Request: /);
  });

  it("a __proto__ key among search's arguments is unknown_field, the envelope POST /v1/search answers for the same JSON", async () => {
    const args = '{"query":"deadline","__proto__":{"limit":1}}';
    const route = await fetch(new URL("/v1/search", target().mcp), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: args,
    });
    assert.equal(route.status, 400);
    const refused = assertEnvelope(await route.json());
    const res = await rpc(
      target().mcp,
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":${args}}}`,
    );
    assert.equal(res.status, 200);
    const { result } = await res.json() as {
      result: { isError: boolean; structuredContent: unknown };
    };
    assert.equal(result.isError, true);
    const out = assertToolOutput("search", result.structuredContent);
    assert.deepEqual(
      [out.code, out.action, out.error],
      [refused.code, refused.action, refused.error],
    );
    assert.deepEqual([out.code, out.error.field], ["unknown_field", "__proto__"]);
  });

  it("a __proto__ key among the other tools' arguments is unknown_field too, sent by the SDK's client", async () => {
    const client = await connect(target().mcp);
    try {
      for (
        const [name, args] of [
          ["expand", '{"provider":"workspace","locator":"x","__proto__":{}}'],
          ["providers", '{"__proto__":{}}'],
          ["status", '{"__proto__":null}'],
        ] as const
      ) {
        const result = await client.callTool({ name, arguments: JSON.parse(args) });
        assert.equal(result.isError, true, name);
        const out = assertToolOutput(name, result.structuredContent);
        assert.deepEqual(
          [out.code, out.action, out.error.field],
          ["unknown_field", "fix_input", "__proto__"],
          name,
        );
      }
    } finally {
      await client.close();
    }
  });

  it("params the method's schema refuses are Invalid params (-32602) naming the field, never a schema library's issue list", async () => {
    const client = await connect(target().mcp);
    const refusal = async (method: string, params: unknown) => {
      const schema = method === "tools/list" ? ListToolsResultSchema : CallToolResultSchema;
      const error = await client.request({ method, params } as never, schema).then(
        () => assert.fail(`${method} ${JSON.stringify(params)} was answered`),
        (error: unknown) => error,
      );
      assert.ok(error instanceof McpError, String(error));
      assert.equal(error.code, ErrorCode.InvalidParams, error.message);
      return error.message.replace(/^MCP error -32602: /, "");
    };
    try {
      for (
        const [params, message] of [
          [{ name: "search", arguments: 5 }, "params.arguments must be an object"],
          [{ name: "search", arguments: ["deadline"] }, "params.arguments must be an object"],
          [{ name: "search", arguments: null }, "params.arguments must be an object"],
          [{ arguments: { query: "deadline" } }, "params.name is required"],
          [{ name: 5, arguments: {} }, "params.name must be a string"],
        ] as const
      ) {
        assert.equal(await refusal("tools/call", params), `Invalid params: ${message}`);
      }
      assert.equal(
        await refusal("tools/list", { cursor: 5 }),
        "Invalid params: params.cursor must be a string",
      );
    } finally {
      await client.close();
    }
    // The SDK's client never sends these: a tools/call without params, an initialize with no fields.
    for (
      const [message, error] of [
        [{ method: "tools/call" }, "params is required"],
        [{ method: "initialize", params: {} }, "params.protocolVersion is required"],
      ] as const
    ) {
      const res = await rpc(target().mcp, { jsonrpc: "2.0", id: 9, ...message });
      const body = await res.json() as JsonRpcError;
      assert.deepEqual(
        [body.id, body.error.code, body.error.message],
        [9, -32602, `Invalid params: ${error}`],
      );
    }
  });

  it("a search through MCP is recorded as a search trace, the same trace as POST /v1/search records", async () => {
    const { mcp, setup } = target();
    const client = await connect(mcp);
    let viaMcp: string;
    try {
      const result = await client.callTool({
        name: "search",
        arguments: { query: "recorded deadline", limit: 5 },
      });
      viaMcp = assertToolOutput("search", result.structuredContent).request_id;
    } finally {
      await client.close();
    }
    const res = await fetch(new URL("/v1/search", mcp), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: "recorded deadline", limit: 5 }),
    });
    const viaRoute = assertEnvelope(await res.json()).request_id as string;
    const traces = await eventually(
      "both searches' traces",
      () => Promise.resolve(tracesOf(setup)),
      (all) => [viaMcp, viaRoute].every((id) => all.some((t) => t.request_id === id)),
      10_000,
    );
    const [mcpTrace, routeTrace] = [viaMcp, viaRoute].map((id) =>
      traces.find((t) => t.request_id === id) as Trace
    );
    assert.deepEqual(comparable(mcpTrace as Trace), comparable(routeTrace as Trace));
  });
}
