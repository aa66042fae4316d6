/**
 * One fetch's trace (docs/security.md, "Search traces"), built from how the fetch ended. Fields
 * are copied by name: the page's host always; its URL, whose path and query can say what a caller
 * reads, only with TRACEFETCH_TRACE_RAW_LOCATORS, else as its HMAC (labelled `locator`, as a
 * search's locators are) when a secret is set; never its text, title or links.
 */
import type { EnvelopeCode, FetchFormat } from "../../protocol/codes.ts";
import type { FetchTrace } from "../../protocol/trace-schema.ts";
import { TRACE_VERSION } from "../../protocol/trace-version.ts";
import type { Caller } from "../../core/caller.ts";
import type { TraceEntry } from "../../protocol/trace-sink.ts";
import type { TraceOptions } from "./build-trace.ts";

/** A fetch that was answered, as the recorder receives it once the answer is on its way. */
export type FetchTraceInput = {
  kind: "fetch";
  /** The final URL of a page read, else the URL asked for. */
  url: string;
  format: FetchFormat;
  code: EnvelopeCode;
  statusCode?: number;
  cached: boolean;
  bytes?: number;
  latencyMs: number;
  caller: Caller;
  requestId: string;
  answeredAt: number;
};

export async function buildFetchTrace(
  input: FetchTraceInput,
  options: TraceOptions,
): Promise<TraceEntry> {
  const { hash } = options;
  const { caller } = input;
  const parsed = URL.canParse(input.url) ? new URL(input.url) : null;
  const fetch: FetchTrace["fetch"] = {
    host: parsed?.hostname ?? "",
    format: input.format,
    code: input.code,
    cached: input.cached,
    latency_ms: Math.max(0, Math.round(input.latencyMs)),
  };
  if (options.rawLocators) fetch.url = input.url;
  else if (hash) fetch.url_hmac = await hash("locator", input.url);
  if (input.statusCode !== undefined) fetch.status_code = input.statusCode;
  if (input.bytes !== undefined) fetch.bytes = input.bytes;
  const trace: FetchTrace = {
    schema_version: TRACE_VERSION,
    kind: "fetch",
    request_id: input.requestId,
    time: new Date(input.answeredAt).toISOString(),
    caller: caller.kind === "token"
      ? {
        authenticated: true,
        ...(hash ? { sub_hmac: await hash("sub", caller.subject) } : {}),
      }
      : { authenticated: false },
    fetch,
  };
  const json = JSON.stringify(trace);
  return { trace, json, bytes: new TextEncoder().encode(json).byteLength };
}
