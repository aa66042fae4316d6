/**
 * The tools of the MCP endpoint (docs/mcp.md): each tool's input and output as valibot schemas,
 * with the name and description `tools/list` shows. `npm run gen:schemas` turns this table into
 * schemas/mcp-tools.json, which the endpoint serves as it is, so no schema is converted at run time.
 *
 * A tool's output is the envelope of the route it stands for: the same header (`ok`, `code`,
 * `action`, `retry_after_ms`...), and on success a `result` of the tool's own shape. A failure
 * carries the header alone (or, for a search whose providers all failed, its result too), so one
 * output schema covers both.
 */
import * as v from "valibot";
import {
  AttemptRecordSchema,
  DecisionSchema,
  EnvelopeSchema,
  ExpandResultSchema,
  MergedEntrySchema,
  ProvidersResultSchema,
  StatusResultSchema,
} from "./envelope-schema.ts";
import { SearchRequestSchema } from "./search-request.ts";
import { FetchRequestSchema, VerifyRequestSchema } from "./fetch-request.ts";
import { FetchResultSchema, VerifyResultSchema } from "./evidence-schema.ts";
import { MAX_LOCATOR_CHARS, MAX_NAME_CHARS } from "./limits.ts";

/** The envelope's header: every field but the command, the result and the mining block. */
const { command: _command, result: _result, mining: _mining, ...HEADER } = EnvelopeSchema.entries;

/** An envelope of `command` whose result, when present, has the tool's own shape. */
function toolOutput<const C extends string, R extends v.GenericSchema>(command: C, result: R) {
  return v.strictObject({ ...HEADER, command: v.literal(command), result: v.optional(result) });
}

/**
 * `search`'s result: the fused list and one line per provider attempt, without the envelope's
 * per-provider candidate lists unless the call asked for `view: "full"`.
 */
export const SearchToolResultSchema = v.strictObject({
  query: v.string(),
  /** The fused list: each entry says which providers found it (`found_by`) and its `best_rank`. */
  merged: v.array(MergedEntrySchema),
  /** Every provider contacted, in plan order: outcome, code, latency, candidate count. */
  attempts: v.array(AttemptRecordSchema),
  decision: DecisionSchema,
  coverage: v.picklist(["complete", "degraded"]),
  usage: v.strictObject({ cost_micros: v.pipe(v.number(), v.integer(), v.minValue(0)) }),
  latency_ms: v.strictObject({
    total: v.pipe(v.number(), v.integer(), v.minValue(0)),
    providers: v.record(v.string(), v.pipe(v.number(), v.integer(), v.minValue(0))),
  }),
  warnings: v.array(v.string()),
});
export type SearchToolResult = v.InferOutput<typeof SearchToolResultSchema>;

export const SearchToolOutputSchema = toolOutput("search", SearchToolResultSchema);

export const ExpandToolInputSchema = v.strictObject({
  /** A provider's name, from a merged entry's `found_by`. */
  provider: v.pipe(v.string(), v.minLength(1), v.maxLength(MAX_NAME_CHARS)),
  /** The entry's `locator`, sent to that provider only. */
  locator: v.pipe(v.string(), v.minLength(1), v.maxLength(MAX_LOCATOR_CHARS)),
});
export const ExpandToolOutputSchema = toolOutput("expand", ExpandResultSchema);

/** `providers` and `status` take nothing. */
export const NoInputSchema = v.strictObject({});
export const ProvidersToolOutputSchema = toolOutput("providers", ProvidersResultSchema);
export const StatusToolOutputSchema = toolOutput("status", StatusResultSchema);

export const FetchToolOutputSchema = toolOutput("fetch", FetchResultSchema);
export const VerifyToolOutputSchema = toolOutput("verify", VerifyResultSchema);

export const MCP_TOOL_NAMES = [
  "search",
  "expand",
  "fetch",
  "verify",
  "providers",
  "status",
] as const;
export type McpToolName = (typeof MCP_TOOL_NAMES)[number];

export type McpToolSpec = {
  name: McpToolName;
  title: string;
  description: string;
  input: v.GenericSchema;
  output: v.GenericSchema;
  /** What a client may assume (MCP's tool annotations): every tool reads; search reaches out. */
  openWorld: boolean;
};

export const MCP_TOOLS: readonly McpToolSpec[] = [
  {
    name: "search",
    title: "Federated search",
    description:
      "Search every provider the gateway declares (or the scope or providers you name) at once: one fused, deduplicated list. Each merged entry has found_by (the providers that found it) and best_rank; attempts says how each provider did. Fields as in POST /v1/search; view defaults to merged, and full adds each provider's candidates. The text lists each provider, then each result; structuredContent is the envelope. A progress token brings a notification per provider as it answers.",
    input: SearchRequestSchema,
    output: SearchToolOutputSchema,
    openWorld: true,
  },
  {
    name: "expand",
    title: "Expand a result",
    description:
      "The evidence behind one search result: its text as the provider holds it. Take provider from the entry's found_by and locator from the entry.",
    input: ExpandToolInputSchema,
    output: ExpandToolOutputSchema,
    openWorld: true,
  },
  {
    name: "fetch",
    title: "Fetch a page as evidence",
    description:
      "Fetch an http(s) page through the gateway, safely (no private networks, robots.txt honoured): main content as markdown (or text with format: text), anchors (one per heading) and links, SHA-256 of body and markdown, and a signed receipt. With query, the best passages come first. Fields as in POST /v1/fetch. The text shows the markdown cut to 4,000 characters; structuredContent is the envelope with all of it. To cite it, keep receipt and markdown and check a quote with verify.",
    input: FetchRequestSchema,
    output: FetchToolOutputSchema,
    openWorld: true,
  },
  {
    name: "verify",
    title: "Verify a quote against a receipt",
    description:
      "Check that a receipt from fetch was signed by this gateway, that markdown is the text it covers, and that a quote is in it (white space and case folded). The verdict is verified, quote_not_found, content_mismatch, signature_invalid or unsigned; a found quote comes with its lines and heading.",
    input: VerifyRequestSchema,
    output: VerifyToolOutputSchema,
    openWorld: false,
  },
  {
    name: "providers",
    title: "List providers",
    description:
      "The providers you may search (name, scope, source class, sensitivity, cost) and the tiers.",
    input: NoInputSchema,
    output: ProvidersToolOutputSchema,
    openWorld: false,
  },
  {
    name: "status",
    title: "Gateway status",
    description:
      "The gateway's version, each provider's state (ready, disabled, not_configured, suspended) and the searches in flight.",
    input: NoInputSchema,
    output: StatusToolOutputSchema,
    openWorld: false,
  },
];
