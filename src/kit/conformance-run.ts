/**
 * The one runner of conformance cases, for an HTTP provider (conformance.ts) and an MCP provider
 * entry (conformance-mcp.ts): each case is one POST, bounded in time (connect, headers and body)
 * and in bytes and never redirected, judged by the case, and kept in the report with its request
 * (the caller's header values hidden), its answer and its verdict.
 */
import { MAX_PROVIDER_BODY_BYTES } from "../protocol/limits.ts";
import { parseJson } from "../protocol/json-value.ts";
import { decodeUtf8, readBounded } from "../io/bounded-reader.ts";
import { isEventStream, SseResponseWatch } from "../transport/mcp-sse.ts";
import { redact } from "../io/redact.ts";
import type {
  ConformanceCaseName,
  ConformanceResponse,
  Exchange,
  Judgement,
} from "./conformance-cases.ts";

/** Long enough for a slow search backend, short enough that a hung provider fails promptly. */
export const DEFAULT_CONFORMANCE_TIMEOUT_MS = 10_000;
/** Response bodies kept in a report, in code points: enough to see what went wrong, short enough to read. */
export const MAX_REPORTED_BODY_CHARS = 2_048;
/** Reasons kept per case: the first few say what is wrong; a hundred say nothing more. */
export const MAX_REPORTED_REASONS = 10;

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
  /** One entry per case, in the order they ran. */
  cases: ConformanceEntry[];
};

/** A complete answer, as a case judges it, with its headers (an MCP session's id). */
export type Answer = Exchange & { headers: Headers };

/** What one case's POST came to: an answer, or why there was none to judge. */
export type Sent = Answer | { response: ConformanceResponse | null; failure: string };

export type RunOptions = {
  fetch?: typeof fetch;
  /** Per request, from sending it to the end of its body. */
  timeoutMs?: number;
  /** Sent with every request (e.g. authorization); their values never appear in a report. */
  headers?: Record<string, string>;
};

/** The cases of one check of one endpoint, run one at a time, in the order they are asked. */
export class ConformanceRun {
  readonly cases: ConformanceEntry[] = [];
  readonly #extra: Record<string, string>;

  constructor(readonly endpoint: string, readonly options: RunOptions) {
    this.#extra = Object.fromEntries(
      Object.entries(options.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]),
    );
  }

  /**
   * Sends one case's `body` with the protocol's `headers` (and the caller's, which they override),
   * judges a complete answer with `judge`, and records the case. Its answer (or failure), and
   * whether it passed.
   */
  async run(spec: {
    case: ConformanceEntry["case"];
    expects: string;
    headers: Record<string, string>;
    body: string;
    /**
     * The JSON-RPC id of the request an MCP case sends: an SSE answer is read until the response
     * to it, as the gateway reads it, since a server may keep the stream open after.
     */
    responseTo?: number;
    judge: (answer: Answer) => Judgement;
  }): Promise<{ sent: Sent; passed: boolean }> {
    const shown = { ...spec.headers };
    for (const name of Object.keys(this.#extra).sort()) {
      if (!(name in spec.headers)) shown[name] = "[redacted]";
    }
    const headers = { ...this.#extra, ...spec.headers };
    const sent = await send(this.endpoint, headers, spec.body, this, spec.responseTo);
    const judged: Judgement = "failure" in sent
      ? { fail: [sent.failure], advice: [] }
      : spec.judge(sent);
    const fail = judged.fail.length > MAX_REPORTED_REASONS
      ? [
        ...judged.fail.slice(0, MAX_REPORTED_REASONS),
        `... and ${judged.fail.length - MAX_REPORTED_REASONS} more`,
      ]
      : judged.fail;
    const verdict = fail.length > 0
      ? "fail"
      : judged.notChecked === undefined
      ? "pass"
      : "not_checked";
    this.cases.push({
      case: spec.case,
      expects: spec.expects,
      request: { method: "POST", headers: shown, body: spec.body },
      response: sent.response,
      verdict,
      reasons: [
        ...fail,
        ...(judged.notChecked === undefined ? [] : [`not checked: ${judged.notChecked}`]),
        ...judged.advice.map((a) => `advice: ${a}`),
      ],
    });
    return { sent, passed: verdict !== "fail" };
  }

  /** The report of the cases run: ok when none failed and all `expected` of them ran. */
  report(
    about: Pick<ConformanceReport, "name" | "scope" | "reported" | "query">,
    expected = this.cases.length,
  ): ConformanceReport {
    const url = new URL(this.endpoint);
    url.username = "";
    url.password = "";
    return {
      endpoint: url.href,
      ...about,
      ok: this.cases.length === expected && this.cases.every((c) => c.verdict !== "fail"),
      cases: this.cases,
    };
  }
}

/** One POST, bounded in time (connect, headers and body) and in bytes; never follows a redirect. */
async function send(
  endpoint: string,
  headers: Record<string, string>,
  body: string,
  { options }: ConformanceRun,
  responseTo?: number,
): Promise<Sent> {
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
    const sse = isEventStream(res.headers.get("content-type"));
    const watch = sse && responseTo !== undefined ? new SseResponseWatch(responseTo) : null;
    const read = await readBounded(
      res.body,
      MAX_PROVIDER_BODY_BYTES,
      null,
      watch === null ? undefined : (chunk) => watch.take(chunk),
    );
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
    // Read up to its response, the stream may end mid-character: its complete events are the text.
    const text = watch?.seen ? watch.text : decodeUtf8(read.bytes);
    const shown = text ?? `<${read.bytes.byteLength} bytes that are not UTF-8>`;
    return {
      response: response(shown, read.bytes.byteLength),
      headers: res.headers,
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

/** `bytes` random bytes in hex: trace ids, and queries no corpus holds. */
export function hex(bytes: number): string {
  const random = crypto.getRandomValues(new Uint8Array(bytes));
  return Array.from(random, (b) => b.toString(16).padStart(2, "0")).join("");
}
