/**
 * The gateway's answer (docs/envelope.md): eight header fields, a request id, and per command a result.
 * These schemas type the code and generate schemas/envelope.json, which tests validate every answer
 * against.
 */
import * as v from "valibot";
import {
  ATTEMPT_CODES,
  ATTEMPT_OUTCOMES,
  COMMANDS,
  ENVELOPE_ACTIONS,
  ENVELOPE_CODES,
  ENVELOPE_STATUSES,
  EVIDENCE_STATES,
  HEALTH_COVERAGES,
  HEALTH_STATUSES,
  SENSITIVITIES,
  SKIP_REASONS,
  TIMEOUT_BUDGETS,
} from "./codes.ts";
import { ReplayResultSchema } from "./replay-result-schema.ts";
import { FetchResultSchema, VerifyResultSchema } from "./evidence-schema.ts";
import { CrawlResultSchema } from "./crawl-event-schema.ts";

const Int = v.pipe(v.number(), v.integer(), v.minValue(0));
/** A moment as RFC 3339 in UTC, as `Date.prototype.toISOString` writes it. */
const Timestamp = v.pipe(v.string(), v.isoTimestamp());

export const CandidateSchema = v.strictObject({
  title: v.string(),
  locator: v.string(),
  snippet: v.string(),
  published_at: v.nullable(v.string()),
  metadata: v.record(v.string(), v.unknown()),
  /** Which of title, snippet, published_at were cut to their bound. */
  truncated: v.array(v.picklist(["title", "snippet", "published_at"])),
});
export type Candidate = v.InferOutput<typeof CandidateSchema>;

export const AttemptRecordSchema = v.strictObject({
  provider: v.string(),
  scope: v.string(),
  source_class: v.string(),
  sensitivity: v.picklist(SENSITIVITIES),
  outcome: v.picklist(ATTEMPT_OUTCOMES),
  code: v.picklist(ATTEMPT_CODES),
  retryable: v.boolean(),
  message: v.string(),
  candidate_count: Int,
  /** On success, when the search has filters: candidates dropped because they failed one. */
  filtered_out: v.optional(Int),
  latency_ms: Int,
  cost_micros: Int,
  warnings: v.array(v.string()),
  budget: v.optional(v.picklist(TIMEOUT_BUDGETS)),
  retry_after_ms: v.optional(Int),
  /** Present on success only: a failed attempt contributes nothing. */
  candidates: v.optional(v.array(CandidateSchema)),
  /** Answered from the cache (docs/envelope.md, "Cached answers"): no provider was contacted. */
  cached: v.optional(v.literal(true)),
  /** With `cached`: how long ago the provider gave this answer. */
  age_ms: v.optional(Int),
});
export type AttemptRecord = v.InferOutput<typeof AttemptRecordSchema>;

export const MergedEntrySchema = v.strictObject({
  rank: v.pipe(Int, v.minValue(1)),
  locator: v.string(),
  title: v.string(),
  snippet: v.string(),
  published_at: v.nullable(v.string()),
  scope: v.string(),
  source_class: v.string(),
  evidence_state: v.picklist(EVIDENCE_STATES),
  sensitivity: v.picklist(SENSITIVITIES),
  found_by: v.array(v.string()),
  found_in: v.array(v.strictObject({ candidate: Int, citation: Int })),
  best_rank: v.pipe(Int, v.minValue(1)),
  score: v.number(),
});
export type MergedEntry = v.InferOutput<typeof MergedEntrySchema>;

export const DecisionSchema = v.strictObject({
  tier: v.nullable(v.string()),
  providers: v.array(v.string()),
  trimmed: v.array(
    v.strictObject({ provider: v.string(), reason: v.literal("cost_ceiling"), cost_micros: Int }),
  ),
  skipped: v.array(
    v.strictObject({
      provider: v.string(),
      reason: v.picklist(SKIP_REASONS),
      /** For `suspended`: when the provider may be contacted again (RFC 3339, UTC). */
      until: v.optional(Timestamp),
      /** For `protocol_version_unsupported`: the versions each side speaks. */
      message: v.optional(v.string()),
    }),
  ),
  /**
   * Whether this search joined an identical one already in flight and shares its fan-out
   * (docs/envelope.md, "Coalescing"). Present on every search answer.
   */
  coalesced: v.optional(v.boolean()),
});
export type Decision = v.InferOutput<typeof DecisionSchema>;

export const SearchResultSchema = v.strictObject({
  query: v.string(),
  merged: v.optional(v.array(MergedEntrySchema)),
  candidates: v.optional(v.array(AttemptRecordSchema)),
  decision: DecisionSchema,
  /**
   * `cost_micros`: the providers actually called; `saved_cost_micros`, beside cached attempts:
   * what they cost when they were asked.
   */
  usage: v.strictObject({ cost_micros: Int, saved_cost_micros: v.optional(Int) }),
  latency_ms: v.strictObject({ total: Int, providers: v.record(v.string(), Int) }),
  coverage: v.picklist(["complete", "degraded"]),
  warnings: v.array(v.string()),
});
export type SearchResult = v.InferOutput<typeof SearchResultSchema>;

/** A search that ran: what the envelope needs to say about it. */
export type CompletedSearch = {
  code: "ok" | "partial" | "all_providers_failed";
  /** For all_providers_failed: whether any failure was retryable. */
  retryable: boolean;
  /**
   * For all_providers_failed when nothing was contacted and some selected provider is suspended:
   * when the first of them comes back, in ms.
   */
  retryAfterMs?: number;
  result: SearchResult;
  /** Fusion's duration, for Server-Timing (attempts carry their own latency). */
  timings: { fusion_ms: number };
};

export const ProviderListingSchema = v.strictObject({
  name: v.string(),
  scope: v.string(),
  source_class: v.string(),
  sensitivity: v.picklist(SENSITIVITIES),
  isolated: v.boolean(),
  cost_micros: Int,
  transport: v.picklist(["builtin", "http", "mcp"]),
});
export type ProviderListing = v.InferOutput<typeof ProviderListingSchema>;

export const ProvidersResultSchema = v.strictObject({
  providers: v.array(ProviderListingSchema),
  tiers: v.record(v.string(), v.strictObject({ cost_ceiling_micros: Int })),
  default_tier: v.nullable(v.string()),
});

/** A provider's last health probe (docs/envelope.md, "Other routes"). */
export const ProviderHealthSchema = v.strictObject({
  /** `unknown`: the provider does not implement health; `unavailable`: the probe failed. */
  status: v.picklist([...HEALTH_STATUSES, "unknown"]),
  coverage: v.picklist(HEALTH_COVERAGES),
  watermark: v.nullable(v.string()),
  document_count: v.optional(Int),
  diagnostics: v.array(v.string()),
  /** When the probe answered (RFC 3339, UTC). */
  checked_at: Timestamp,
});
export type ProviderHealth = v.InferOutput<typeof ProviderHealthSchema>;

/** One provider in `/v1/status` and `/v1/doctor`. */
export const ProviderStateSchema = v.strictObject({
  name: v.string(),
  state: v.picklist(["ready", "disabled", "not_configured", "suspended"]),
  /** For `suspended`: when searches may contact it again (RFC 3339, UTC). */
  until: v.optional(Timestamp),
  /** Retryable failures it caused since its last success, when there are any. */
  consecutive_failures: v.optional(Int),
  /** Its last health probe; `/v1/status` shows it only once `/v1/doctor` has probed. */
  health: v.optional(ProviderHealthSchema),
});
export type ProviderState = v.InferOutput<typeof ProviderStateSchema>;

/** `POST /v1/refresh`: the provider's health once it brought its index up to date. */
export const RefreshResultSchema = v.strictObject({
  provider: v.string(),
  health: ProviderHealthSchema,
});

/**
 * The store the gateway's instances share (docs/deploy.md, "Shared state"), as `/v1/status` and
 * `/v1/doctor` show it: which one, whether it answers, and how often this instance answered from
 * its own memory instead since it started.
 */
export const SharedStateStatusSchema = v.strictObject({
  backend: v.picklist(["memory", "redis", "durable_objects"]),
  state: v.picklist(["ok", "degraded"]),
  /** Why it is degraded, naming no URL, address or secret; absent when ok. */
  reason: v.optional(v.string()),
  fallbacks: Int,
});
export type SharedStateStatus = v.InferOutput<typeof SharedStateStatusSchema>;

/** `GET /v1/doctor`: every provider the caller may see, with its health. */
export const GatewayDoctorResultSchema = v.strictObject({
  providers: v.array(ProviderStateSchema),
  /** Absent from gateways older than shared state. */
  shared_state: v.optional(SharedStateStatusSchema),
});

const MiningState = v.picklist(["enabled", "disabled", "undecided", "degraded"]);

/** Mining as `/v1/status` shows it (docs/envelope.md, "Mining"): the block's state and counters. */
export const MiningStatusSchema = v.strictObject({
  state: MiningState,
  configured: v.boolean(),
  /** Which kind of sink, never where it is; null when none is configured. */
  sink: v.nullable(v.picklist(["file", "webhook", "queue"])),
  health: v.array(v.string()),
  /** Traces waiting for the sink. */
  queued: Int,
  /** Traces dropped since start because the queue was full. */
  dropped: Int,
  /** Traces the sink took since start. */
  written: Int,
});
export type MiningStatus = v.InferOutput<typeof MiningStatusSchema>;

/** The export of traces (docs/deploy.md, "Observing it"), as `/v1/status` shows it. */
export const TracesStatusSchema = v.strictObject({
  state: v.picklist(["off", "exporting"]),
  /** Spans waiting in the bounded queue for export now. */
  queued: Int,
  /** Spans dropped because the queue was full (a collector down or slow). */
  dropped: Int,
  exported: Int,
  /** Spans whose export failed (refused, unreachable or late). */
  failed: Int,
});
export type TracesStatus = v.InferOutput<typeof TracesStatusSchema>;

export const StatusResultSchema = v.strictObject({
  service: v.literal("tracefetch-edge"),
  version: v.string(),
  providers: v.array(ProviderStateSchema),
  searches_in_flight: Int,
  max_inflight: Int,
  max_providers: Int,
  /** Absent from gateways older than mining. */
  mining: v.optional(MiningStatusSchema),
  /** Absent from gateways older than shared state. */
  shared_state: v.optional(SharedStateStatusSchema),
  /** Absent from gateways older than traces. */
  traces: v.optional(TracesStatusSchema),
});

/** One check of `tracefetch doctor`: its own code (from the one table) and what to do about it. */
export const DoctorCheckSchema = v.strictObject({
  check: v.picklist(["connection", "token", "manifest", "gateway"]),
  ok: v.boolean(),
  code: v.picklist(ENVELOPE_CODES),
  action: v.picklist(ENVELOPE_ACTIONS),
  message: v.string(),
});
export type DoctorCheck = v.InferOutput<typeof DoctorCheckSchema>;

/** `tracefetch doctor`: every check, in the order run; the envelope's code is the first problem's. */
export const DoctorResultSchema = v.strictObject({
  gateway: v.string(),
  checks: v.array(DoctorCheckSchema),
});

/** `tracefetch validate`: a manifest checked offline, with every problem the manifest rules found. */
export const ValidateResultSchema = v.strictObject({
  manifest: v.string(),
  valid: v.boolean(),
  providers: Int,
  issues: v.array(
    v.strictObject({ provider: v.optional(v.string()), field: v.string(), message: v.string() }),
  ),
});

/** `tracefetch connect`: what was saved (the variable's name, never the token) and where. */
export const ConnectResultSchema = v.strictObject({
  gateway: v.string(),
  token_env: v.string(),
  token_set: v.boolean(),
  saved_to: v.string(),
  gateway_version: v.string(),
  /** The gateway's mining, as its `/v1/status` says; absent when it does not say. */
  mining: v.optional(
    v.strictObject({ state: MiningState, configured: v.boolean(), health: v.array(v.string()) }),
  ),
});

/** `tracefetch conformance`: a provider endpoint checked case by case (the transcript is for people). */
export const ConformanceResultSchema = v.strictObject({
  endpoint: v.string(),
  /** The declared name and scope (`--name`, `--scope`); null when none were given. */
  provider: v.nullable(v.string()),
  scope: v.nullable(v.string()),
  /** The provider and scope the provider's own answers named; null when no answer named them. */
  reported: v.nullable(v.strictObject({ provider: v.string(), scope: v.string() })),
  /** The query the limit cases searched for. */
  query: v.string(),
  passed: Int,
  failed: Int,
  /** Cases with nothing to compare with (`identity` when no name and scope were declared). */
  not_checked: Int,
  cases: v.array(
    v.strictObject({
      case: v.string(),
      verdict: v.picklist(["pass", "fail", "not_checked"]),
      expects: v.string(),
      /** The HTTP status received, or null when no complete answer came. */
      status: v.nullable(Int),
      reasons: v.array(v.string()),
    }),
  ),
});

/** `GET /`: what this gateway is and the routes it answers, for a person or an agent arriving. */
/** `POST /v1/expand`: the evidence behind a locator, as the named provider gave it. */
export const ExpandResultSchema = v.strictObject({
  provider: v.string(),
  evidence: v.strictObject({
    locator: v.string(),
    title: v.string(),
    /** Cut at MAX_EXPAND_TEXT_CHARS, ending with the truncation marker when `truncated`. */
    text: v.string(),
    content_type: v.string(),
    retrieved_at: v.string(),
    revision: v.optional(v.string()),
    truncated: v.boolean(),
  }),
});
export type ExpandResult = v.InferOutput<typeof ExpandResultSchema>;

export const IndexResultSchema = v.strictObject({
  name: v.literal("tracefetch-edge"),
  version: v.string(),
  routes: v.array(
    v.strictObject({ path: v.string(), methods: v.array(v.string()), answers: v.string() }),
  ),
  /** The JSON Schemas this gateway serves, as paths on it. */
  schemas: v.array(v.string()),
  /** The documents that describe the routes and answers, as paths in the source repository. */
  docs: v.array(v.string()),
});

export const MiningSchema = v.strictObject({
  state: MiningState,
  configured: v.boolean(),
  recorded: v.boolean(),
  health: v.array(v.string()),
});
export type Mining = v.InferOutput<typeof MiningSchema>;

export const EnvelopeSchema = v.strictObject({
  version: v.literal(1),
  command: v.picklist(COMMANDS),
  ok: v.boolean(),
  exit_code: v.picklist([0, 1, 2, 3, 4]),
  status: v.picklist(ENVELOPE_STATUSES),
  code: v.picklist(ENVELOPE_CODES),
  retryable: v.boolean(),
  action: v.picklist(ENVELOPE_ACTIONS),
  request_id: v.string(),
  error: v.optional(v.strictObject({ message: v.string(), field: v.optional(v.string()) })),
  retry_after_ms: v.optional(Int),
  result: v.optional(
    v.union([
      SearchResultSchema,
      ProvidersResultSchema,
      StatusResultSchema,
      DoctorResultSchema,
      ValidateResultSchema,
      ConnectResultSchema,
      ConformanceResultSchema,
      IndexResultSchema,
      ExpandResultSchema,
      GatewayDoctorResultSchema,
      RefreshResultSchema,
      ReplayResultSchema,
      FetchResultSchema,
      VerifyResultSchema,
      CrawlResultSchema,
    ]),
  ),
  mining: v.optional(MiningSchema),
});
export type Envelope = v.InferOutput<typeof EnvelopeSchema>;
