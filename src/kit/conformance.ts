/**
 * runConformance(endpoint, options): calls one provider endpoint the way the gateway would, one
 * request per case, and reports every exchange with its verdict and the reasons for it.
 */
import { DEFAULT_CONFORMANCE_QUERY, MAX_PROVIDER_BODY_BYTES } from "../protocol/limits.ts";
import { endpointProblem } from "../protocol/url-policy.ts";
import { decodeUtf8, readBounded } from "../io/bounded-reader.ts";
import { redact } from "../io/redact.ts";
import {
  type CaseContext,
  type CaseSpec,
  CONFORMANCE_CASES,
  type ConformanceCaseName,
  type ConformanceResponse,
  type Exchange,
  type Judgement,
  reportedIdentity,
} from "./conformance-cases.ts";
import { parseJson } from "../protocol/json-value.ts";

/** Long enough for a slow search backend, short enough that a hung provider fails promptly. */
export const DEFAULT_CONFORMANCE_TIMEOUT_MS = 10_000;
/** Response bodies kept in a report, in code points: enough to see what went wrong, short enough to read. */
export const MAX_REPORTED_BODY_CHARS = 2_048;
/** Reasons kept per case: the first few say what is wrong; a hundred say nothing more. */
export const MAX_REPORTED_REASONS = 10;
/** The honest-empty query is this prefix and random hex: one token no corpus holds, and too far from any word for fuzzy or prefix matching. */
export const NONSENSE_QUERY_PREFIX = "zzqx";

export type ConformanceOptions = {
  /**
   * The provider and scope the manifest would declare for this endpoint, both or neither: without
   * them the `identity` case is not checked, and the report says what the provider calls itself.
   */
  name?: string;
  scope?: string;
  fetch?: typeof fetch;
  /** Per request, from sending it to the end of its body. */
  timeoutMs?: number;
  /** Sent with every request (e.g. authorization); their values never appear in a report. */
  headers?: Record<string, string>;
  /** A query that matches something, for the limit cases (default DEFAULT_CONFORMANCE_QUERY). */
  query?: string;
};

export type ConformanceRequest = {
  method: "POST";
  /** The protocol's headers, then the caller's by name with their values shown as `[redacted]`. */
  headers: Record<string, string>;
  body: string;
};

export type ConformanceEntry = {
  /** An HTTP provider's case, or an MCP provider entry's (src/kit/conformance-mcp.ts). */
  case: ConformanceCaseName | `mcp-${string}`;
  /** What the case checks, in one sentence. */
  expects: string;
  request: ConformanceRequest;
  /** null: no complete answer (refused, reset, timed out); the reasons say which. */
  response: ConformanceResponse | null;
  /** `not_checked`: nothing to compare with (`identity` without a declared name and scope). */
  verdict: "pass" | "fail" | "not_checked";
  /**
   * Why the case failed, or why it was not checked; on a pass, advice that did not fail it, each
   * starting with "advice:".
   */
  reasons: string[];
};

export type ConformanceReport = {
  /** The endpoint checked, with any credentials in the URL removed. */
  endpoint: string;
  /** The declared name and scope; null when none were given. */
  name: string | null;
  scope: string | null;
  /** The provider and scope the first answer that named them gave; null when none did. */
  reported: { provider: string; scope: string } | null;
  query: string;
  /** No case failed (a case not checked does not fail). */
  ok: boolean;
  /** One entry per case, in CONFORMANCE_CASES order. */
  cases: ConformanceEntry[];
};

/**
 * Throws a TypeError for an endpoint the gateway could never call (the URL policy, with http: on
 * loopback allowed as for a provider under development) and for a name without a scope or the
 * reverse; everything else is reported.
 */
export async function runConformance(
  endpoint: string,
  options: ConformanceOptions,
): Promise<ConformanceReport> {
  const problem = endpointProblem(endpoint, true);
  if (problem !== null) throw new TypeError(`the endpoint ${problem}`);
  if ((options.name === undefined) !== (options.scope === undefined)) {
    throw new TypeError("declare both name and scope, or neither");
  }
  const url = new URL(endpoint);
  const context: CaseContext = {
    name: options.name ?? null,
    scope: options.scope ?? null,
    query: options.query ?? DEFAULT_CONFORMANCE_QUERY,
    nonsense: `${NONSENSE_QUERY_PREFIX}${hex(8)}`,
    actions: null,
    locator: null,
  };
  const traceId = hex(16);
  const extra = Object.fromEntries(
    Object.entries(options.headers ?? {}).map(([k, value]) => [k.toLowerCase(), value]),
  );
  const cases: ConformanceEntry[] = [];
  let reported: ConformanceReport["reported"] = null;
  // One case at a time: a provider under test is not a load test, and the order stays stable.
  for (const spec of CONFORMANCE_CASES as readonly CaseSpec[]) {
    const body = spec.body(context);
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "application/json",
      "x-request-id": `conformance-${spec.case}`,
      traceparent: `00-${traceId}-${hex(8)}-01`,
    };
    const shown = { ...headers };
    for (const name of Object.keys(extra).sort()) {
      if (!(name in headers)) shown[name] = "[redacted]";
    }
    const sent = await send(url.href, { ...extra, ...headers }, body, options);
    if (reported === null && !("failure" in sent)) reported = reportedIdentity(sent);
    const judged: Judgement = "failure" in sent
      ? { fail: [sent.failure], advice: [] }
      : spec.check(sent, context);
    if (!("failure" in sent)) spec.learn?.(sent, context);
    const fail = judged.fail.length > MAX_REPORTED_REASONS
      ? [
        ...judged.fail.slice(0, MAX_REPORTED_REASONS),
        `... and ${judged.fail.length - MAX_REPORTED_REASONS} more`,
      ]
      : judged.fail;
    cases.push({
      case: spec.case as ConformanceCaseName,
      expects: spec.expects,
      request: { method: "POST", headers: shown, body },
      response: sent.response,
      verdict: fail.length > 0 ? "fail" : judged.notChecked === undefined ? "pass" : "not_checked",
      reasons: [
        ...fail,
        ...(judged.notChecked === undefined ? [] : [`not checked: ${judged.notChecked}`]),
        ...judged.advice.map((a) => `advice: ${a}`),
      ],
    });
  }
  url.username = "";
  url.password = "";
  return {
    endpoint: url.href,
    name: context.name,
    scope: context.scope,
    reported,
    query: context.query,
    ok: cases.every((c) => c.verdict !== "fail"),
    cases,
  };
}

type Failed = { response: ConformanceResponse | null; failure: string };

/** One POST, bounded in time (connect, headers and body) and in bytes; never follows a redirect. */
async function send(
  endpoint: string,
  headers: Record<string, string>,
  body: string,
  options: ConformanceOptions,
): Promise<Exchange | Failed> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_CONFORMANCE_TIMEOUT_MS;
  const controller = new AbortController();
  // One timer for the whole exchange, cleared when it ends, so none outlives its case.
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const res = await (options.fetch ?? fetch)(endpoint, {
      method: "POST",
      headers,
      body,
      redirect: "manual",
      signal: controller.signal,
    });
    const read = await readBounded(res.body, MAX_PROVIDER_BODY_BYTES, null);
    const response = (shown: string, bytes: number): ConformanceResponse => {
      const points = Array.from(shown);
      const truncated = points.length > MAX_REPORTED_BODY_CHARS;
      return {
        status: res.status,
        content_type: res.headers.get("content-type"),
        body: truncated ? points.slice(0, MAX_REPORTED_BODY_CHARS).join("") : shown,
        truncated,
        bytes,
      };
    };
    if (!read.ok) {
      return {
        response: response("", read.read),
        failure:
          `the body passed ${MAX_PROVIDER_BODY_BYTES} bytes, where the gateway stops reading`,
      };
    }
    if (res.type === "opaqueredirect") {
      return {
        response: response("", 0),
        failure: "the provider answered a redirect, which the gateway never follows",
      };
    }
    const text = decodeUtf8(read.bytes);
    const shown = text ?? `<${read.bytes.byteLength} bytes that are not UTF-8>`;
    return {
      response: response(shown, read.bytes.byteLength),
      text,
      json: text === null ? undefined : parseJson(text),
    };
  } catch (error) {
    const failure = controller.signal.aborted
      ? `no complete answer within ${timeoutMs} ms`
      : `no answer: ${describe(error)}`;
    return { response: null, failure };
  } finally {
    clearTimeout(timer);
  }
}

/** Node's fetch hides the reason in `cause` (ECONNREFUSED, UND_ERR_*); show its code too. */
function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause;
  const code = typeof cause?.code === "string" ? `${cause.code}: ` : "";
  return redact(`${code}${error instanceof Error ? error.message : String(error)}`);
}

function hex(bytes: number): string {
  const random = crypto.getRandomValues(new Uint8Array(bytes));
  return Array.from(random, (b) => b.toString(16).padStart(2, "0")).join("");
}
