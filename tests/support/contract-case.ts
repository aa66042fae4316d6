/**
 * One request of the API contract's table (tests/support/contract-cases.ts) and the refusals every
 * GET and every POST with a JSON body share, built once for each route that gives them.
 */
import type { EnvelopeCode } from "../../src/protocol/codes.ts";
import { GATEWAY_HEADER, type GatewayName } from "./contract-gateways.ts";
import type { TokenName } from "./contract-tokens.ts";
import type { World } from "./contract-world.ts";

export type ContractCase = {
  /** What the case shows, in a few words. */
  name: string;
  method: string;
  /** The path and query sent. */
  path: string;
  /** Where it is sent; `default` when absent. */
  gateway?: GatewayName;
  token?: TokenName;
  headers?: Record<string, string>;
  /** A JSON body, sent as `application/json` unless `headers` say otherwise. */
  json?: unknown;
  /** A body sent as these bytes. */
  body?: string | Uint8Array;
  /**
   * Sent on a socket, byte for byte, and its answer then shown to Prism: for requests Prism would
   * rewrite (a body that is not JSON or not UTF-8) or could not carry (a body that stops).
   * `stall`: the body's length is announced, and it stops after the bytes given.
   */
  raw?: "send" | "stall";
  /** The status expected, and the envelope's code when the answer is an envelope. */
  status: number;
  code?: EnvelopeCode;
  /** The media type the answer must have, where the case shows one of several. */
  type?: string;
  /** Values the answer must hold, by dotted path (`result.mining.sink`): what the case shows. */
  shows?: Record<string, unknown>;
  /** The request breaks the document on purpose: Prism's findings on the request's side are due. */
  outside?: true;
  /** What the world must be before it is sent; what `before` returns is run after it. */
  before?: (world: World) => Promise<(() => Promise<void>) | void>;
};

export const JSON_HEADERS = { "content-type": "application/json" };
export const MCP_ACCEPT = { accept: "application/json, text/event-stream" };
export const MCP_INIT = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "c", version: "1" },
  },
};
/** Over 1 MiB: the body limit. */
export const HUGE = "x".repeat(1_100_000);
/** Over 16 KiB of request line and headers. */
export const LONG_QUERY = "q".repeat(17_000);

/** A fault of the gateway's own: its 500 envelope. */
export const FAULT = {
  name: "a fault of the gateway",
  gateway: "faulty",
  status: 500,
  code: "internal_error",
} as const;

export const holdSlot = async (world: World) => (await world.holdSlot()).release;

/** The refusals of any GET: `pretty` out of range, no token, a bad token, keys out of reach. */
export function readRefusals(path: string, open = false, gateway?: GatewayName): ContractCase[] {
  const join = path.includes("?") ? "&" : "?";
  const cases: ContractCase[] = [
    {
      name: "pretty out of range",
      method: "GET",
      path: `${path}${join}pretty=7`,
      ...(gateway === undefined ? {} : { gateway }),
      status: 400,
      code: "invalid_field",
      outside: true,
    },
    { ...FAULT, method: "GET", path },
  ];
  if (open) return cases;
  return [
    ...cases,
    {
      name: "no token where one is needed",
      method: "GET",
      path,
      gateway: "locked",
      status: 401,
      code: "unauthorized",
    },
    {
      name: "a token that fails",
      method: "GET",
      path,
      gateway: "full",
      token: "invalid",
      status: 401,
      code: "token_invalid",
    },
    {
      name: "keys out of reach",
      method: "GET",
      path,
      gateway: "locked",
      token: "unfetchable",
      status: 503,
      code: "auth_unavailable",
    },
  ];
}

export const holdBody = async (world: World) => (await world.holdBody()).release;

/**
 * The refusals of any POST with a JSON body: its media type, size, shape and arrival, and the
 * token; `valid` is a body it accepts.
 */
export function bodyRefusals(
  path: string,
  valid: Record<string, string>,
  gateway: GatewayName,
): ContractCase[] {
  const field = Object.keys(valid)[0] as string;
  const post = { method: "POST", path, gateway };
  return [
    {
      ...post,
      name: "not JSON's media type",
      headers: { "content-type": "text/plain" },
      body: "{}",
      status: 415,
      code: "unsupported_media_type",
      outside: true,
    },
    {
      ...post,
      name: "over 1 MiB",
      json: { query: HUGE },
      status: 413,
      code: "body_too_large",
      outside: true,
    },
    {
      ...post,
      name: "not JSON",
      headers: JSON_HEADERS,
      body: '{"query":',
      raw: "send",
      status: 400,
      code: "invalid_json",
    },
    {
      ...post,
      name: "not UTF-8",
      headers: JSON_HEADERS,
      body: new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]),
      raw: "send",
      status: 400,
      code: "invalid_utf8",
    },
    {
      ...post,
      name: "a field no schema knows",
      json: { nope: 1 },
      status: 400,
      code: "unknown_field",
      outside: true,
    },
    {
      ...post,
      name: "an explicit null",
      json: { ...valid, [field]: null },
      status: 400,
      code: "null_field",
      outside: true,
    },
    {
      ...post,
      name: "a body that stops arriving",
      gateway: "full",
      headers: JSON_HEADERS,
      body: '{"q',
      raw: "stall",
      status: 408,
      code: "request_timeout",
    },
    { ...post, ...FAULT, json: valid },
    {
      ...post,
      name: "another body of this client's in reading",
      gateway: "full",
      json: valid,
      status: 429,
      code: "overloaded",
      before: holdBody,
    },
    {
      ...post,
      name: "no token where one is needed",
      gateway: "locked",
      json: {},
      status: 401,
      code: "unauthorized",
      outside: true,
    },
    {
      ...post,
      name: "an expired token",
      gateway: "full",
      token: "expired",
      json: {},
      status: 401,
      code: "token_expired",
      outside: true,
    },
    {
      ...post,
      name: "keys out of reach",
      gateway: "locked",
      token: "unfetchable",
      json: {},
      status: 503,
      code: "auth_unavailable",
      outside: true,
    },
  ];
}

/** The bytes a raw case sends on its socket. */
export function rawRequest(c: ContractCase, token: string | null): Buffer {
  const body = typeof c.body === "string" ? Buffer.from(c.body) : Buffer.from(c.body ?? []);
  const headers: Record<string, string> = {
    host: "127.0.0.1",
    [GATEWAY_HEADER]: c.gateway ?? "default",
    ...(token === null ? {} : { authorization: `Bearer ${token}` }),
    ...c.headers,
  };
  if (c.method !== "GET" && headers["content-length"] === undefined) {
    // A stalled body announces more than it sends.
    headers["content-length"] = String(body.length + (c.raw === "stall" ? 10 : 0));
  }
  const head = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("");
  return Buffer.concat([Buffer.from(`${c.method} ${c.path} HTTP/1.1\r\n${head}\r\n`), body]);
}
