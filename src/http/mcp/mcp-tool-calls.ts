/**
 * The six MCP tools, each answered with the envelope its route answers: the same parsers, the same
 * admission and run of a search, the same expand, providers and status. Only the search result is
 * reshaped (the fused list and one line per attempt), so a tool's output is its route's envelope.
 */
import type { Command } from "../../protocol/codes.ts";
import type { AttemptRecord, Envelope } from "../../protocol/envelope-schema.ts";
import type { McpToolName, SearchToolResult } from "../../protocol/mcp-tools.ts";
import { parseSearchRequestText, type View } from "../../protocol/search-request.ts";
import { parseExpandRequestText } from "../../protocol/action-request.ts";
import { parseFetchRequestText, parseVerifyRequestText } from "../../protocol/fetch-request.ts";
import type { EvidencePorts } from "../fetch-route.ts";
import type { CompletedSearch } from "../../protocol/envelope-schema.ts";
import { problemEnvelope } from "../../envelope/build-envelope.ts";
import { searchEnvelope } from "../../envelope/search-envelope.ts";
import type { Caller } from "../../core/caller.ts";
import type { GatewayState } from "../../gateway/gateway-state.ts";
import type { RunOptions } from "../../gateway/search-run.ts";
import type { ServerSpan } from "../../core/telemetry.ts";
import { providersEnvelope, statusEnvelope } from "../info-routes.ts";

/** Who calls, as the caller middleware resolved it, and the HTTP request the call came in. */
export type ToolCaller = {
  state: GatewayState;
  caller: Caller;
  /** The client address (client-address.ts), whom an anonymous caller's searches count against. */
  client: string;
  requestId: string;
  /** Work after the answer, as the search routes have it: a search's trace is recorded there. */
  later: RunOptions["later"];
  /** How this runtime reaches pages, for the fetch tool; null: fetch answers fetch_disabled. */
  evidence: EvidencePorts | null;
  /** The request's server span, when the gateway traces: named after the tool called. */
  span?: ServerSpan | undefined;
};

/** Told as each provider of a search answers: how many have, of how many, and which one. */
export type OnProgress = (done: number, total: number, message: string) => void;

/** A tool's answer: its route's envelope, with the search result in the tool's own shape. */
export type ToolEnvelope = Omit<Envelope, "result" | "mining"> & {
  result?: Envelope["result"] | SearchToolResult;
};

export async function callTool(
  name: McpToolName,
  args: Record<string, unknown>,
  who: ToolCaller,
  signal: AbortSignal,
  onProgress: OnProgress | null,
): Promise<ToolEnvelope> {
  switch (name) {
    case "search":
      return await searchTool(args, who, signal, onProgress);
    case "expand":
      return await expandTool(args, who, signal);
    case "fetch":
      return await fetchTool(args, who, signal);
    case "verify":
      return await verifyTool(args, who);
    case "providers":
      return noArguments("providers", args, who) ??
        withoutMining(providersEnvelope(who.state, who.caller, who.requestId));
    case "status":
      return noArguments("status", args, who) ??
        withoutMining(await statusEnvelope(who.state, who.caller, who.requestId));
    default: {
      const never: never = name;
      throw new Error(`unhandled tool ${String(never)}`);
    }
  }
}

/**
 * `search`: the request's fields, read by the parser POST /v1/search uses. `view` is `merged`
 * unless the call says otherwise: a model reads the fused list; `full` adds each attempt's list.
 */
async function searchTool(
  args: Record<string, unknown>,
  who: ToolCaller,
  signal: AbortSignal,
  onProgress: OnProgress | null,
): Promise<ToolEnvelope> {
  // As JSON text, through the reader POST /v1/search uses: a lone surrogate is refused there too.
  const parsed = parseSearchRequestText(
    JSON.stringify({ view: "merged", ...args }),
    "the arguments",
  );
  if (!parsed.ok) {
    const { code, message, field } = parsed.problem;
    return problemEnvelope("search", code, who.requestId, message, field);
  }
  const { request } = parsed;
  const admission = await who.state.admit({
    request,
    caller: who.caller,
    client: who.client,
    requestId: who.requestId,
    trace: who.span?.trace,
  });
  if (!admission.ok) return withoutMining(admission.envelope);
  let total = 0;
  let done = 0;
  return await admission.search.run({
    signal,
    later: who.later,
    onPlan: (decision) => {
      total = decision.providers.length;
    },
    onAttempt: (_index, attempt) => onProgress?.(++done, total, progressLine(attempt)),
  }, ({ completed }) => searchOutput(completed, who.requestId, request.view));
}

function progressLine(attempt: AttemptRecord): string {
  const how = attempt.outcome === "success"
    ? `${attempt.candidate_count} result${attempt.candidate_count === 1 ? "" : "s"}`
    : `${attempt.outcome} (${attempt.code})`;
  return `${attempt.provider}: ${how} in ${attempt.latency_ms} ms`;
}

/** The search's envelope, its result as the tool gives it: merged list, attempts, decision. */
function searchOutput(completed: CompletedSearch, requestId: string, view: View): ToolEnvelope {
  const { result, mining: _mining, ...header } = searchEnvelope(completed, requestId, "full");
  const search = completed.result;
  const attempts = (search.candidates ?? []).map((attempt) => {
    if (view === "full") return attempt;
    const { candidates: _candidates, ...summary } = attempt;
    return summary;
  });
  return result === undefined ? header : {
    ...header,
    result: {
      query: search.query,
      merged: search.merged ?? [],
      attempts,
      decision: search.decision,
      coverage: search.coverage,
      usage: search.usage,
      latency_ms: search.latency_ms,
      warnings: search.warnings,
    },
  };
}

/** `expand`: `{provider, locator}`, read by the parser POST /v1/expand uses. */
async function expandTool(
  args: Record<string, unknown>,
  who: ToolCaller,
  signal: AbortSignal,
): Promise<ToolEnvelope> {
  // The arguments were JSON on the wire; as text again they meet the route's own reader.
  const parsed = parseExpandRequestText(JSON.stringify(args));
  if (!parsed.ok) {
    const { code, message, field } = parsed.problem;
    return problemEnvelope("expand", code, who.requestId, message, field);
  }
  return withoutMining(
    await who.state.expand({
      request: parsed.request,
      caller: who.caller,
      client: who.client,
      requestId: who.requestId,
      signal,
    }),
  );
}

/** `fetch`: the fields of POST /v1/fetch, read by its parser; the answer is its envelope. */
async function fetchTool(
  args: Record<string, unknown>,
  who: ToolCaller,
  signal: AbortSignal,
): Promise<ToolEnvelope> {
  const parsed = parseFetchRequestText(JSON.stringify(args), "the arguments");
  if (!parsed.ok) {
    const { code, message, field } = parsed.problem;
    return problemEnvelope("fetch", code, who.requestId, message, field);
  }
  const { answerFetch } = await import("../fetch-route.ts");
  return withoutMining(
    await answerFetch(who.state, who.evidence, {
      request: parsed.request,
      caller: who.caller,
      client: who.client,
      requestId: who.requestId,
      signal,
      later: who.later ?? ((work) => void work().catch(() => {})),
      trace: who.span?.trace,
    }),
  );
}

/** `verify`: `{receipt, markdown, quote}`, read by the parser POST /v1/verify uses. */
async function verifyTool(args: Record<string, unknown>, who: ToolCaller): Promise<ToolEnvelope> {
  const parsed = parseVerifyRequestText(JSON.stringify(args), "the arguments");
  if (!parsed.ok) {
    const { code, message, field } = parsed.problem;
    return problemEnvelope("verify", code, who.requestId, message, field);
  }
  const { answerVerify } = await import("../fetch-route.ts");
  return withoutMining(await answerVerify(who.state, parsed.request, who.requestId));
}

/** `providers` and `status` take no arguments: one given is refused as a route refuses a field. */
function noArguments(command: Command, args: Record<string, unknown>, who: ToolCaller) {
  const [name] = Object.keys(args);
  return name === undefined ? null : problemEnvelope(
    command,
    "unknown_field",
    who.requestId,
    `unknown argument "${name}"; the ${command} tool takes none`,
    name,
  );
}

function withoutMining(envelope: Envelope): ToolEnvelope {
  const { mining: _mining, ...rest } = envelope;
  return rest;
}
