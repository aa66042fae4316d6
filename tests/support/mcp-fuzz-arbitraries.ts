/**
 * Generated `POST /mcp` requests (docs/mcp.md): one JSON-RPC message or a batch of them
 * (`initialize`, `ping`, `tools/list`, `tools/call` of each tool with generated arguments, methods
 * the server does not serve, notifications, answers nobody asked for), messages that are not
 * JSON-RPC, bodies that are not JSON or not UTF-8, and the headers around them (content type,
 * Accept, MCP-Protocol-Version, Origin, a token), mostly as a client sends them
 * (tests/support/mcp.ts), now and then not.
 */
import fc from "fast-check";
import { MAX_LOCATOR_CHARS } from "../../src/protocol/limits.ts";
import { pick } from "./fuzz-text-arbitraries.ts";
import type { Wire } from "./fuzz-wire.ts";
import { wireText } from "./fuzz-wire.ts";
import { NOTES, NOTES_DOCS, VAULT, VAULT_DOCS } from "./action-fuzz-fixture.ts";

export const TOOL_NAMES = ["search", "expand", "providers", "status"] as const;

/** One JSON-RPC message as sent; `id` absent makes a notification. */
export type McpMessage =
  | {
    kind: "request";
    id?: Wire;
    method: string;
    params?: Wire;
    /** Without the `jsonrpc` member, or with another value. */
    jsonrpc?: Wire;
  }
  /** An answer, as a client sends one back to a server's request. */
  | { kind: "answer"; id: Wire; error: boolean }
  /** JSON that is no JSON-RPC message. */
  | { kind: "other"; value: Wire };

export type McpBody =
  | { kind: "one"; message: McpMessage }
  | { kind: "batch"; messages: McpMessage[] }
  | { kind: "text"; text: string }
  | { kind: "bytes"; bytes: number[] };

export type McpRequestSpec = {
  body: McpBody;
  contentType: string | null;
  accept: string | null;
  protocolVersion: string | null;
  origin: string | null;
  token: "none" | "reader" | "invalid";
};

// ---- Values ----

const UNITS = ["a", "Z", "0", " ", "é", "😀", "\u200b", "\n", "-"];
const words = fc.constantFrom(
  "deadline",
  "retry",
  "jitter",
  "Every call",
  "page the on-call",
  "idempotent",
);
const text = pick<string>(
  { weight: 8, arbitrary: words },
  { weight: 4, arbitrary: fc.string({ unit: fc.constantFrom(...UNITS), maxLength: 12 }) },
  { weight: 1, arbitrary: fc.constantFrom("", " ", "\ud800", "a\udfffb", "Bearer s3cr3tZ") },
);
const scalar: fc.Arbitrary<Wire> = pick<Wire>(
  { weight: 3, arbitrary: text },
  { weight: 2, arbitrary: fc.integer({ min: -5, max: 500_000 }) },
  { weight: 1, arbitrary: fc.constantFrom<Wire>(null, true, false, 2.5, { raw: "1e400" }) },
);
const value: fc.Arbitrary<Wire> = pick<Wire>(
  { weight: 4, arbitrary: scalar },
  { weight: 1, arbitrary: fc.array(scalar, { maxLength: 3 }) },
  {
    weight: 1,
    arbitrary: fc.array(fc.tuple(fc.constantFrom("a", "__proto__", "query"), scalar), {
      maxLength: 2,
    }).map((obj): Wire => ({ obj })),
  },
);

/** Members: each known one mostly valid, now and then any value; unknown keys now and then. */
const members = (
  known: Array<[string, fc.Arbitrary<Wire>, number]>,
): fc.Arbitrary<Array<[string, Wire]>> =>
  fc.tuple(
    ...known.map(([key, good, share]) =>
      pick<Array<[string, Wire]>>(
        { weight: share, arbitrary: good.map((v): Array<[string, Wire]> => [[key, v]]) },
        { weight: 1, arbitrary: value.map((v): Array<[string, Wire]> => [[key, v]]) },
        { weight: Math.max(1, 10 - share), arbitrary: fc.constant([]) },
      )
    ),
    pick<Array<[string, Wire]>>(
      { weight: 8, arbitrary: fc.constant([]) },
      {
        weight: 1,
        arbitrary: fc.array(
          fc.tuple(fc.constantFrom("__proto__", "colour", "Query", "constructor", "q"), value),
          { minLength: 1, maxLength: 2 },
        ),
      },
    ),
  ).map((parts) => parts.flat());

const searchArgs = members([
  ["query", text, 12],
  [
    "providers",
    fc.constantFrom<Wire>([NOTES], [VAULT], [NOTES, VAULT], ["nope"], [], NOTES),
    3,
  ],
  ["scope", fc.constantFrom<Wire>(NOTES, VAULT, "public", "auto", "nope"), 2],
  ["limit", fc.constantFrom<Wire>(1, 3, 100), 4],
  ["view", fc.constantFrom<Wire>("merged", "full"), 2],
  ["timeout_ms", fc.constantFrom<Wire>(2_000, 300_000), 2],
  [
    "filters",
    fc.constantFrom<Wire>({ obj: [["domains", { obj: [["include", ["notes.example"]]] }]] }, {
      obj: [],
    }, "x"),
    1,
  ],
]);
const LOCATORS = [...NOTES_DOCS, ...VAULT_DOCS].map((d) => d.locator);
const expandArgs = members([
  ["provider", fc.constantFrom<Wire>(NOTES, VAULT, "nope", ""), 12],
  [
    "locator",
    pick<Wire>(
      { weight: 6, arbitrary: fc.constantFrom(...LOCATORS) },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          "https://notes.example/never",
          "x".repeat(MAX_LOCATOR_CHARS + 1),
        ),
      },
    ),
    12,
  ],
]);
const noArgs = members([]);

const argumentsFor = (name: string): fc.Arbitrary<Wire | undefined> =>
  pick<Wire | undefined>(
    {
      weight: 12,
      arbitrary: (name === "search" ? searchArgs : name === "expand" ? expandArgs : noArgs).map((
        obj,
      ): Wire => ({ obj })),
    },
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constantFrom<Wire>(null, [], "query", 1) },
  );

const progressMeta = pick<Array<[string, Wire]>>(
  { weight: 6, arbitrary: fc.constant([]) },
  {
    weight: 1,
    arbitrary: fc.constantFrom<Wire>("p1", 7, null, { obj: [] }).map((token): Array<
      [string, Wire]
    > => [["_meta", { obj: [["progressToken", token]] }]]),
  },
);

const toolCallParams: fc.Arbitrary<Wire | undefined> = pick<Wire | undefined>(
  {
    weight: 12,
    // Searches most: they reach the providers and stream progress.
    arbitrary: fc.constantFrom<string>("search", "search", "search", ...TOOL_NAMES).chain((name) =>
      fc.tuple(argumentsFor(name), progressMeta).map(([args, meta]): Wire => ({
        obj: [
          ["name", name],
          ...(args === undefined ? [] : [["arguments", args] as [string, Wire]]),
          ...meta,
        ],
      }))
    ),
  },
  {
    weight: 2,
    arbitrary: fc.tuple(
      fc.constantFrom<Wire>("crawl", "", "Search", 5, null),
      argumentsFor("search"),
    )
      .map(([name, args]): Wire => ({
        obj: [
          ["name", name],
          ...(args === undefined ? [] : [["arguments", args] as [string, Wire]]),
        ],
      })),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom<Wire | undefined>(undefined, null, [], "x", { obj: [] }),
  },
);

const PROTOCOL_VERSIONS = ["2025-06-18", "2025-03-26", "2024-11-05", "1999-01-01", "", "latest"];
const initializeParams: fc.Arbitrary<Wire | undefined> = pick<Wire | undefined>(
  {
    weight: 6,
    arbitrary: fc.constantFrom(...PROTOCOL_VERSIONS).map((v): Wire => ({
      obj: [
        ["protocolVersion", v],
        ["capabilities", { obj: [] }],
        ["clientInfo", { obj: [["name", "fuzz"], ["version", "1.0.0"]] }],
      ],
    })),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom<Wire | undefined>(
      undefined,
      { obj: [] },
      { obj: [["protocolVersion", 20250618]] },
      { obj: [["protocolVersion", "2025-06-18"], ["capabilities", "all"]] },
      {
        obj: [["protocolVersion", "2025-06-18"], ["capabilities", { obj: [] }], [
          "clientInfo",
          null,
        ]],
      },
    ),
  },
);

const id = pick<Wire | undefined>(
  { weight: 10, arbitrary: fc.integer({ min: 0, max: 1_000 }) },
  { weight: 3, arbitrary: fc.constantFrom<Wire>("a", "req-1", "") },
  { weight: 1, arbitrary: fc.constantFrom<Wire | undefined>(null, 1.5, { obj: [] }, [], true) },
);

const request: fc.Arbitrary<McpMessage> = pick<McpMessage>(
  {
    weight: 12,
    arbitrary: fc.tuple(id, toolCallParams).map(([i, params]): McpMessage => ({
      kind: "request",
      ...(i === undefined ? {} : { id: i }),
      method: "tools/call",
      ...(params === undefined ? {} : { params }),
    })),
  },
  {
    weight: 3,
    arbitrary: fc.tuple(id, initializeParams).map(([i, params]): McpMessage => ({
      kind: "request",
      ...(i === undefined ? {} : { id: i }),
      method: "initialize",
      ...(params === undefined ? {} : { params }),
    })),
  },
  {
    weight: 3,
    arbitrary: fc.tuple(
      id,
      fc.constantFrom("tools/list", "ping"),
      fc.constantFrom<Wire | undefined>(undefined, { obj: [] }, { obj: [["cursor", "x"]] }, {
        obj: [["cursor", 5]],
      }, "x"),
    ).map(([i, method, params]): McpMessage => ({
      kind: "request",
      ...(i === undefined ? {} : { id: i }),
      method,
      ...(params === undefined ? {} : { params }),
    })),
  },
  {
    weight: 2,
    arbitrary: fc.tuple(
      id,
      fc.constantFrom(
        "resources/list",
        "prompts/list",
        "completion/complete",
        "logging/setLevel",
        "tools/CALL",
        "",
        "rpc.discover",
      ),
    ).map(([i, method]): McpMessage => ({
      kind: "request",
      ...(i === undefined ? {} : { id: i }),
      method,
    })),
  },
  {
    weight: 2,
    // Notifications: no id.
    arbitrary: fc.constantFrom(
      "notifications/initialized",
      "notifications/cancelled",
      "notifications/progress",
      "notifications/roots/list_changed",
      "notifications/whatever",
    ).map((method): McpMessage => ({ kind: "request", method })),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(id, fc.constantFrom<Wire>("1.0", 2, null)).map((
      [i, jsonrpc],
    ): McpMessage => ({
      kind: "request",
      ...(i === undefined ? {} : { id: i }),
      method: "tools/list",
      jsonrpc,
    })),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.integer({ min: 0, max: 9 }), fc.boolean()).map((
      [i, error],
    ): McpMessage => ({ kind: "answer", id: i, error })),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom<Wire>(
      { obj: [] },
      { obj: [["jsonrpc", "2.0"]] },
      { obj: [["jsonrpc", "2.0"], ["method", 5]] },
      { obj: [["jsonrpc", "2.0"], ["id", 1], ["result", { obj: [] }], ["error", { obj: [] }]] },
      42,
      "x",
      null,
      [[]],
    ).map((value): McpMessage => ({ kind: "other", value })),
  },
);

const NOT_JSON = ["", "{not json", "[", "nul", '{"jsonrpc":"2.0",}', "\u0000"];

const body = pick<McpBody>(
  { weight: 24, arbitrary: request.map((message): McpBody => ({ kind: "one", message })) },
  {
    weight: 3,
    arbitrary: fc.array(request, { minLength: 0, maxLength: 4 }).map((messages): McpBody => ({
      kind: "batch",
      messages,
    })),
  },
  {
    weight: 1,
    arbitrary: pick<McpBody>(
      fc.constantFrom(...NOT_JSON).map((t): McpBody => ({ kind: "text", text: t })),
      fc.constantFrom<number[]>([0xff], [0x7b, 0xc0, 0xaf, 0x7d]).map((bytes): McpBody => ({
        kind: "bytes",
        bytes,
      })),
    ),
  },
);

export const mcpRequest: fc.Arbitrary<McpRequestSpec> = fc.record({
  body,
  contentType: pick<string | null>(
    {
      weight: 30,
      arbitrary: fc.constantFrom("application/json", "application/json; charset=utf-8"),
    },
    { weight: 1, arbitrary: fc.constantFrom(null, "text/plain", "application/x-ndjson") },
  ),
  accept: pick<string | null>(
    { weight: 30, arbitrary: fc.constant("application/json, text/event-stream") },
    {
      weight: 1,
      arbitrary: fc.constantFrom(null, "application/json", "text/event-stream", "*/*", "text/html"),
    },
  ),
  protocolVersion: pick<string | null>(
    { weight: 16, arbitrary: fc.constant(null) },
    { weight: 4, arbitrary: fc.constantFrom("2025-06-18", "2025-03-26") },
    { weight: 1, arbitrary: fc.constantFrom("1999-01-01", "garbage") },
  ),
  origin: pick<string | null>(
    { weight: 14, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: fc.constantFrom("http://127.0.0.1:5173", "https://rebound.example") },
  ),
  token: pick(
    { weight: 18, arbitrary: fc.constant("none" as const) },
    { weight: 6, arbitrary: fc.constant("reader" as const) },
    { weight: 1, arbitrary: fc.constant("invalid" as const) },
  ),
});

// ---- The bytes ----

function messageWire(m: McpMessage): Wire {
  switch (m.kind) {
    case "request": {
      const fields: Array<[string, Wire]> = [];
      if (m.jsonrpc !== undefined) fields.push(["jsonrpc", m.jsonrpc]);
      else fields.push(["jsonrpc", "2.0"]);
      if (m.id !== undefined) fields.push(["id", m.id]);
      fields.push(["method", m.method]);
      if (m.params !== undefined) fields.push(["params", m.params]);
      return { obj: fields };
    }
    case "answer":
      return {
        obj: [
          ["jsonrpc", "2.0"],
          ["id", m.id],
          m.error
            ? ["error", { obj: [["code", -32601], ["message", "no"]] }]
            : ["result", { obj: [] }],
        ],
      };
    case "other":
      return m.value;
  }
}

const encoder = new TextEncoder();

export function mcpBytes(spec: McpRequestSpec): Uint8Array {
  const b = spec.body;
  switch (b.kind) {
    case "one":
      return encoder.encode(wireText(messageWire(b.message)));
    case "batch":
      return encoder.encode(wireText(b.messages.map(messageWire)));
    case "text":
      return encoder.encode(b.text);
    case "bytes":
      return new Uint8Array(b.bytes);
  }
}

/** The messages of the body that are well-formed requests (an id that is a string or a number). */
export function requestsOf(
  spec: McpRequestSpec,
): Array<{ id: string | number; message: McpMessage }> {
  const b = spec.body;
  const messages = b.kind === "one" ? [b.message] : b.kind === "batch" ? b.messages : [];
  return messages.flatMap((m) =>
    m.kind === "request" && m.jsonrpc === undefined &&
      (typeof m.id === "string" || (typeof m.id === "number" && Number.isInteger(m.id)))
      ? [{ id: m.id, message: m }]
      : []
  );
}

/** The tool a `tools/call` request names, when it is one of the four and its arguments an object. */
export function toolOf(m: McpMessage): string | null {
  if (m.kind !== "request" || m.method !== "tools/call") return null;
  const p = m.params;
  if (typeof p !== "object" || p === null || Array.isArray(p) || !("obj" in p)) return null;
  const name = p.obj.find(([k]) => k === "name")?.[1];
  return typeof name === "string" && (TOOL_NAMES as readonly string[]).includes(name) ? name : null;
}
