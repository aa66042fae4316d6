/**
 * The soak's judgements, as pure functions so each can be tried on a made-up answer: is an answer
 * an envelope (docs/envelope.md) and with which code, did a stream end with its `done` event
 * (docs/protocol.md), is an answer of `/mcp` one docs/mcp.md allows (JSON-RPC, a tool result
 * carrying an envelope, 202, or an envelope refusing the HTTP exchange), did memory grow, and does
 * the run pass.
 */
import { CODES } from "../src/envelope/code-table.ts";
import {
  COMMANDS,
  ENVELOPE_ACTIONS,
  ENVELOPE_CODES,
  ENVELOPE_STATUSES,
} from "../src/protocol/codes.ts";
import { MAX_RSS_GROWTH } from "./soak-setup.ts";

/** An answer is either an envelope with a code, or a fault of the gateway's, with its reason. */
export type Verdict =
  | { ok: true; code: string }
  | { ok: false; reason: string };

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const oneOf = (list: readonly string[], v: unknown) => typeof v === "string" && list.includes(v);

/**
 * The header every envelope carries. Returns the code, or what is wrong: a missing or mistyped
 * field, `ok` disagreeing with `exit_code`, or a code whose table row does not match the header.
 */
export function checkHeader(value: unknown): Verdict {
  if (!isRecord(value)) return { ok: false, reason: "not a JSON object" };
  if (value.version !== 1) return { ok: false, reason: "version is not 1" };
  if (!oneOf(COMMANDS, value.command)) return { ok: false, reason: "bad command" };
  if (typeof value.ok !== "boolean") return { ok: false, reason: "bad ok" };
  if (typeof value.exit_code !== "number") return { ok: false, reason: "bad exit_code" };
  if (!oneOf(ENVELOPE_STATUSES, value.status)) return { ok: false, reason: "bad status" };
  if (!oneOf(ENVELOPE_CODES, value.code)) return { ok: false, reason: "unknown code" };
  if (typeof value.retryable !== "boolean") return { ok: false, reason: "bad retryable" };
  if (!oneOf(ENVELOPE_ACTIONS, value.action)) return { ok: false, reason: "bad action" };
  if (typeof value.request_id !== "string" || value.request_id === "") {
    return { ok: false, reason: "no request_id" };
  }
  if (value.ok !== (value.exit_code === 0)) {
    return { ok: false, reason: "ok disagrees with exit_code" };
  }
  const code = value.code as keyof typeof CODES;
  const row = CODES[code];
  if (row.exit !== value.exit_code || row.status !== value.status) {
    return { ok: false, reason: `${code}: exit_code or status differs from the code table` };
  }
  if (code === "internal_error") return { ok: false, reason: "internal_error" };
  return { ok: true, code };
}

/** A whole (non-streamed) answer: its body must be an envelope whose code maps to its HTTP status. */
export function checkEnvelope(httpStatus: number, body: string): Verdict {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return { ok: false, reason: `HTTP ${httpStatus} with a body that is not JSON` };
  }
  const header = checkHeader(value);
  if (!header.ok) return header;
  const expected = CODES[header.code as keyof typeof CODES].http;
  if (expected !== httpStatus) {
    return { ok: false, reason: `${header.code} sent as HTTP ${httpStatus}, not ${expected}` };
  }
  return header;
}

/**
 * A streamed answer read to its end. An NDJSON stream must end with a `done` event carrying the
 * envelope header, and its code is the search's; any other answer (a refusal before the stream
 * began) must be an ordinary envelope.
 */
export function checkStream(httpStatus: number, contentType: string, body: string): Verdict {
  if (!contentType.toLowerCase().startsWith("application/x-ndjson")) {
    return checkEnvelope(httpStatus, body);
  }
  if (httpStatus !== 200) return { ok: false, reason: `stream sent as HTTP ${httpStatus}` };
  const lines = body.split("\n").filter((line) => line.trim() !== "");
  const last = lines.at(-1);
  if (last === undefined) return { ok: false, reason: "empty stream" };
  if (!body.endsWith("\n")) return { ok: false, reason: "stream cut off mid-line" };
  let done: unknown;
  try {
    done = JSON.parse(last);
  } catch {
    return { ok: false, reason: "stream's last line is not JSON" };
  }
  if (!isRecord(done) || done.event !== "done") {
    return { ok: false, reason: "stream ended without a done event" };
  }
  const { event: _event, ...header } = done;
  return checkHeader(header);
}

/** JSON-RPC 2.0's codes, and the range it keeps for a server's own errors. */
export function isJsonRpcCode(code: unknown): boolean {
  return Number.isInteger(code) &&
    ([-32700, -32600, -32601, -32602, -32603].includes(code as number) ||
      ((code as number) <= -32000 && (code as number) >= -32099));
}

/**
 * The JSON-RPC messages of an `/mcp` answer: one or a batch as JSON, or the `data:` of each event
 * of an SSE stream; a string says what is wrong.
 */
function mcpMessages(contentType: string, body: string): unknown[] | string {
  if (contentType.toLowerCase().startsWith("text/event-stream")) {
    const out: unknown[] = [];
    for (const event of body.split(/\r?\n\r?\n/)) {
      const data = event.split(/\r?\n/).filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).trimStart()).join("\n");
      if (data === "") continue;
      try {
        out.push(JSON.parse(data));
      } catch {
        return "an SSE event that is not JSON";
      }
    }
    return out.length === 0 ? "an SSE stream with no message" : out;
  }
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return "a body that is not JSON";
  }
  return Array.isArray(value) ? value : [value];
}

/**
 * An answer of `POST /mcp` (docs/mcp.md). 202 must have no body; an envelope (a refusal of the HTTP
 * exchange: 401, 403, 405, 408, 413, 429) is judged as any envelope; anything else is JSON-RPC:
 * every message `jsonrpc: "2.0"`, an answer with exactly one of result and error, an error's code
 * JSON-RPC's and never -32603 (the SDK's "internal error"), a tool result's `structuredContent` an
 * envelope header whose `isError` is its `ok` negated. The code counted: `mcp <envelope code>` of
 * the last tool result, else `jsonrpc <error code>` of the last error, else `mcp result`, or
 * `mcp 202`.
 */
export function checkMcp(httpStatus: number, contentType: string, body: string): Verdict {
  if (httpStatus >= 500) return { ok: false, reason: `/mcp answered HTTP ${httpStatus}` };
  if (httpStatus === 202) {
    return body === "" ? { ok: true, code: "mcp 202" } : { ok: false, reason: "202 with a body" };
  }
  const messages = mcpMessages(contentType, body);
  if (typeof messages === "string") return { ok: false, reason: `/mcp answered ${messages}` };
  const [first] = messages;
  if (messages.length === 1 && isRecord(first) && "command" in first) {
    return checkEnvelope(httpStatus, body);
  }
  let code = "mcp result";
  for (const m of messages) {
    if (!isRecord(m) || m.jsonrpc !== "2.0") return { ok: false, reason: "not a JSON-RPC message" };
    if ("method" in m) {
      if (m.method !== "notifications/progress") {
        return { ok: false, reason: `a server message ${String(m.method)}` };
      }
      continue;
    }
    if (("result" in m) === ("error" in m)) {
      return { ok: false, reason: "a JSON-RPC answer with neither or both of result and error" };
    }
    if ("error" in m) {
      const error = isRecord(m.error) ? m.error : {};
      if (!isJsonRpcCode(error.code)) {
        return { ok: false, reason: `JSON-RPC error code ${String(error.code)}` };
      }
      if (error.code === -32603) return { ok: false, reason: "JSON-RPC -32603 internal error" };
      code = `jsonrpc ${error.code}`;
      continue;
    }
    const result = isRecord(m.result) ? m.result : {};
    if (!("structuredContent" in result)) continue;
    const header = checkHeader(result.structuredContent);
    if (!header.ok) return { ok: false, reason: `structuredContent: ${header.reason}` };
    const ok = (result.structuredContent as Record<string, unknown>).ok;
    if (result.isError !== !ok) return { ok: false, reason: "isError disagrees with ok" };
    code = `mcp ${header.code}`;
  }
  return { ok: true, code };
}

/** An HTTP/1.1 answer read from a raw socket. */
export type RawAnswer = { status: number; headers: Record<string, string>; body: string };

/** Parses a complete raw answer, or returns null when the bytes are not one yet. */
export function parseRawAnswer(data: Buffer): RawAnswer | null {
  const end = data.indexOf("\r\n\r\n");
  if (end < 0) return null;
  const [statusLine = "", ...lines] = data.subarray(0, end).toString("latin1").split("\r\n");
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
  if (match === null) return null;
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    if (colon > 0) {
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
  }
  const length = Number(headers["content-length"] ?? Number.NaN);
  const body = data.subarray(end + 4);
  if (!Number.isInteger(length) || body.length < length) return null;
  return { status: Number(match[1]), headers, body: body.subarray(0, length).toString("utf8") };
}

/** One RSS reading of the gateway, `t` in ms since the load began. */
export type RssSample = { t: number; rss: number };

export type RssCheck = {
  /** Whether there was enough of a run to compare two windows. */
  checked: boolean;
  baseline: { from: number; to: number; median: number };
  last: { from: number; to: number; median: number };
  /** last / baseline - 1. */
  growth: number;
  ok: boolean;
  note: string;
};

function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? sorted[mid] as number
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

const WARM_UP_MS = 30_000;
const MINUTE_MS = 60_000;
/** Shorter windows than this say nothing about growth. */
const MIN_WINDOW_MS = 10_000;

/**
 * The median RSS of the last minute of load against that of minute 2 (60-120 s). A run shorter
 * than 3 minutes has no minute 2 apart from its last minute, so it compares the last window with
 * the first window after a 30 s warm-up, each as long as fits (at most a minute) without overlap.
 */
export function rssGrowth(samples: readonly RssSample[], loadMs: number): RssCheck {
  let baseline: [number, number];
  let last: [number, number];
  let note: string;
  if (loadMs >= 3 * MINUTE_MS) {
    baseline = [MINUTE_MS, 2 * MINUTE_MS];
    last = [loadMs - MINUTE_MS, loadMs];
    note = "median RSS of the last minute vs minute 2";
  } else {
    const window = Math.min(MINUTE_MS, (loadMs - WARM_UP_MS) / 2);
    baseline = [WARM_UP_MS, WARM_UP_MS + window];
    last = [loadMs - window, loadMs];
    note = `run under 3 min: median RSS of the last ${fmtS(window)} vs the first ${
      fmtS(window)
    } after a 30 s warm-up`;
  }
  const inWindow = ([from, to]: [number, number]) =>
    samples.filter((s) => s.t >= from && s.t < to).map((s) => s.rss);
  const b = median(inWindow(baseline));
  const l = median(inWindow(last));
  const checked = baseline[1] - baseline[0] >= MIN_WINDOW_MS && Number.isFinite(b) &&
    Number.isFinite(l);
  const growth = checked ? l / b - 1 : Number.NaN;
  return {
    checked,
    baseline: { from: baseline[0], to: baseline[1], median: b },
    last: { from: last[0], to: last[1], median: l },
    growth,
    ok: !checked || growth <= MAX_RSS_GROWTH,
    note: checked ? note : "run too short to compare two windows after a 30 s warm-up: not checked",
  };
}

function fmtS(ms: number): string {
  return `${Math.round(ms / 1000)} s`;
}
