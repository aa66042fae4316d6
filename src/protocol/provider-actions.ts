/**
 * The provider actions beside `search` (docs/protocol.md, "Actions: describe, health, expand, refresh"): `describe`, `health`,
 * `expand`, `refresh` and `stats` (its schemas in collection-stats.ts), each a request and an
 * answer posted to the provider's one endpoint and told apart by `schema_version` and `action`.
 * Like search, version 1 is strict.
 *
 * The describe request and answer are frozen across protocol majors: every future major keeps
 * them byte for byte, so any gateway can ask any provider which majors it speaks.
 */
import * as v from "valibot";
import {
  HEALTH_COVERAGES,
  HEALTH_STATUSES,
  PROVIDER_ACTIONS,
  type ProviderAction,
} from "./codes.ts";
import {
  MAX_DESCRIBE_LIST_ITEMS,
  MAX_EXPAND_TEXT_CHARS,
  MAX_LOCATOR_CHARS,
  MAX_NAME_CHARS,
  MAX_REVISION_CHARS,
  TRUNCATION_MARKER,
} from "./limits.ts";
import { parseJson } from "./json-value.ts";
import type {
  Evidence,
  HealthAnswer,
  ProviderDescription,
  SearchAdapter,
  SearchAnswer,
} from "./provider-contract.ts";
import { PROVIDER_RESPONSE_VERSION, type ProviderResponse } from "./provider-wire.ts";
import {
  PROVIDER_STATS_REQUEST_VERSION,
  PROVIDER_STATS_VERSION,
  type StatsResponse,
  StatsResponseSchema,
} from "./collection-stats.ts";

export const PROVIDER_DESCRIBE_REQUEST_VERSION = "tracefetch.provider-describe-request.v1";
export const PROVIDER_DESCRIBE_VERSION = "tracefetch.provider-describe.v1";
export const PROVIDER_HEALTH_REQUEST_VERSION = "tracefetch.provider-health-request.v1";
export const PROVIDER_HEALTH_VERSION = "tracefetch.provider-health.v1";
export const PROVIDER_EXPAND_REQUEST_VERSION = "tracefetch.provider-expand-request.v1";
export const PROVIDER_EXPAND_VERSION = "tracefetch.provider-expand.v1";
export const PROVIDER_REFRESH_REQUEST_VERSION = "tracefetch.provider-refresh-request.v1";

/**
 * The statuses that say "not supported" for describe and for every action a provider's describe
 * does not declare: 404, 405 and 501 say so in HTTP, and a strict v1 provider, written before
 * describe, refuses a request schema it does not know with 400 `invalid_request`. The gateway and
 * conformance read them alike.
 */
export const NOT_SUPPORTED_STATUSES: readonly number[] = [400, 404, 405, 501];

/** The protocol majors this gateway and this kit speak. */
export const PROTOCOL_VERSIONS: readonly number[] = [1];

/** The actions beside search, the ones a provider may or may not implement. */
export type OptionalAction = Exclude<ProviderAction, "search">;

/** RFC 3339 date-time (section 5.6), checked by shape and by a real calendar date. */
const RFC3339 =
  /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[Tt ]([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)$/;

export function isRfc3339(value: string): boolean {
  if (!RFC3339.test(value) || Number.isNaN(Date.parse(value.replace(" ", "T")))) return false;
  // Date.parse rolls a day past its month's end into the next month ("02-30" is March 2nd): the
  // day must exist in its month (RFC 3339 section 5.7).
  const year = Number(value.slice(0, 4));
  const month = Number(value.slice(5, 7));
  const day = Number(value.slice(8, 10));
  return day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}

const rfc3339 = () =>
  v.pipe(
    v.string(),
    v.regex(RFC3339, "must be an RFC 3339 date-time (2026-01-31T12:00:00Z)"),
    v.check(isRfc3339, "must be a real date and time"),
  );

/** A locator as a provider issued it: 1 to MAX_LOCATOR_CHARS code points. */
const locator = () =>
  v.pipe(
    v.string(),
    v.minLength(1),
    v.check(
      (s) => s.length <= MAX_LOCATOR_CHARS || Array.from(s).length <= MAX_LOCATOR_CHARS,
      `is longer than ${MAX_LOCATOR_CHARS} code points`,
    ),
  );

const listName = () => v.pipe(v.string(), v.minLength(1), v.maxLength(MAX_NAME_CHARS));

// The describe request and answer: frozen across majors (see above).
export const DescribeRequestSchema = v.strictObject({
  schema_version: v.literal(PROVIDER_DESCRIBE_REQUEST_VERSION),
  action: v.literal("describe"),
});
export const DescribeResponseSchema = v.strictObject({
  schema_version: v.literal(PROVIDER_DESCRIBE_VERSION),
  provider: v.string(),
  scope: v.string(),
  /** Names outside PROVIDER_ACTIONS are kept and ignored: a later major may add actions. */
  actions: v.pipe(v.array(listName()), v.maxLength(MAX_DESCRIBE_LIST_ITEMS)),
  filters: v.pipe(v.array(listName()), v.maxLength(MAX_DESCRIBE_LIST_ITEMS)),
  protocol_versions: v.pipe(
    v.array(v.pipe(v.number(), v.integer(), v.minValue(1))),
    v.minLength(1),
    v.maxLength(MAX_DESCRIBE_LIST_ITEMS),
  ),
});
export type DescribeResponse = v.InferOutput<typeof DescribeResponseSchema>;

export const HealthRequestSchema = v.strictObject({
  schema_version: v.literal(PROVIDER_HEALTH_REQUEST_VERSION),
  action: v.literal("health"),
});
export const HealthResponseSchema = v.strictObject({
  schema_version: v.literal(PROVIDER_HEALTH_VERSION),
  provider: v.string(),
  scope: v.string(),
  status: v.picklist(HEALTH_STATUSES),
  coverage: v.picklist(HEALTH_COVERAGES),
  watermark: v.nullable(rfc3339()),
  document_count: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  diagnostics: v.optional(v.array(v.string())),
});
export type HealthResponse = v.InferOutput<typeof HealthResponseSchema>;

export const ExpandRequestSchema = v.strictObject({
  schema_version: v.literal(PROVIDER_EXPAND_REQUEST_VERSION),
  action: v.literal("expand"),
  locator: locator(),
  /** The revision the caller saw (a candidate's `metadata.revision`), to ask for that version. */
  revision: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(MAX_REVISION_CHARS))),
});

export const ExpandResponseSchema = v.strictObject({
  schema_version: v.literal(PROVIDER_EXPAND_VERSION),
  provider: v.string(),
  scope: v.string(),
  locator: locator(),
  title: v.string(),
  text: v.string(),
  content_type: v.pipe(v.string(), v.minLength(1), v.maxLength(MAX_NAME_CHARS * 2)),
  retrieved_at: rfc3339(),
  revision: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(MAX_REVISION_CHARS))),
  truncated: v.optional(v.boolean()),
});
export type ExpandResponse = v.InferOutput<typeof ExpandResponseSchema>;

export const RefreshRequestSchema = v.strictObject({
  schema_version: v.literal(PROVIDER_REFRESH_REQUEST_VERSION),
  action: v.literal("refresh"),
});

/** Each action's request schema_version. */
export const ACTION_REQUEST_VERSIONS = {
  describe: PROVIDER_DESCRIBE_REQUEST_VERSION,
  health: PROVIDER_HEALTH_REQUEST_VERSION,
  expand: PROVIDER_EXPAND_REQUEST_VERSION,
  refresh: PROVIDER_REFRESH_REQUEST_VERSION,
  stats: PROVIDER_STATS_REQUEST_VERSION,
} as const satisfies Record<OptionalAction, string>;

/** Each action's answer schema: refresh answers with its health. */
const ANSWER_SCHEMAS = {
  describe: DescribeResponseSchema,
  health: HealthResponseSchema,
  expand: ExpandResponseSchema,
  refresh: HealthResponseSchema,
  stats: StatsResponseSchema,
} as const;

/** Each action's answer schema_version, named when an answer does not match it. */
const ANSWER_VERSIONS = {
  describe: PROVIDER_DESCRIBE_VERSION,
  health: PROVIDER_HEALTH_VERSION,
  expand: PROVIDER_EXPAND_VERSION,
  refresh: PROVIDER_HEALTH_VERSION,
  stats: PROVIDER_STATS_VERSION,
} as const satisfies Record<OptionalAction, string>;

export type ActionAnswer = {
  describe: DescribeResponse;
  health: HealthResponse;
  expand: ExpandResponse;
  refresh: HealthResponse;
  stats: StatsResponse;
};

/**
 * The body that asks `action`; `expand` also carries the locator (and revision), `stats` the
 * search's query.
 */
export function actionRequest(
  action: OptionalAction,
  ask?: { locator: string; revision?: string | undefined } | { query: string },
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    schema_version: ACTION_REQUEST_VERSIONS[action],
    action,
  };
  if (action === "expand" && ask && "locator" in ask) {
    body.locator = ask.locator;
    if (ask.revision !== undefined) body.revision = ask.revision;
  }
  if (action === "stats" && ask && "query" in ask) body.query = ask.query;
  return body;
}

export type ActionCheck<A extends OptionalAction> =
  | { ok: true; answer: ActionAnswer[A] }
  | {
    ok: false;
    code: "invalid_utf8" | "invalid_json" | "schema_violation" | "identity_mismatch";
    message: string;
  };

/**
 * The one check of an action's answer body (as checkProviderAnswer is for search): strict UTF-8
 * (`text` null when it is not), JSON, the action's schema, and with `declared` the identity.
 */
export function checkActionAnswer<A extends OptionalAction>(
  action: A,
  text: string | null,
  declared: { name: string; scope: string } | null,
): ActionCheck<A> {
  if (text === null) {
    return { ok: false, code: "invalid_utf8", message: "the body is not valid UTF-8" };
  }
  const json = parseJson(text);
  if (json === undefined) {
    return { ok: false, code: "invalid_json", message: "the body is not JSON" };
  }
  return checkActionJson(action, json, declared);
}

/** checkActionAnswer for a value already parsed (an in-process adapter's document). */
export function checkActionJson<A extends OptionalAction>(
  action: A,
  json: unknown,
  declared: { name: string; scope: string } | null,
): ActionCheck<A> {
  const schema = ANSWER_SCHEMAS[action] as unknown as v.GenericSchema<unknown, ActionAnswer[A]>;
  const parsed = v.safeParse(schema, json);
  if (!parsed.success) {
    const [issue] = parsed.issues;
    const at = v.getDotPath(issue) || "body";
    const what = issue.received === "undefined"
      ? "is required"
      : issue.type === "strict_object"
      ? "is not a field of version 1"
      : issue.message;
    return {
      ok: false,
      code: "schema_violation",
      message: `the answer does not match ${ANSWER_VERSIONS[action]}: ${at} ${what}`,
    };
  }
  const answer = parsed.output as ActionAnswer[A] & { provider: string; scope: string };
  if (declared !== null && (answer.provider !== declared.name || answer.scope !== declared.scope)) {
    return {
      ok: false,
      code: "identity_mismatch",
      message:
        `the answer claims provider "${answer.provider}" scope "${answer.scope}", but the manifest declares "${declared.name}" scope "${declared.scope}"`,
    };
  }
  return { ok: true, answer };
}

/** The actions an adapter implements, in PROVIDER_ACTIONS order. */
export function adapterActions(adapter: SearchAdapter): string[] {
  return PROVIDER_ACTIONS.filter((a) =>
    a === "search" || a === "describe" || typeof adapter[a] === "function"
  );
}

/** What `describe` says of an adapter that does not describe itself. */
export function describeAdapter(adapter: SearchAdapter): ProviderDescription {
  return {
    actions: adapterActions(adapter),
    filters: [...(adapter.filters ?? [])],
    protocol_versions: [...PROTOCOL_VERSIONS],
  };
}

/**
 * The search answer an adapter's result makes on the wire: what serveProvider sends, and what the
 * gateway checks of an adapter it calls in process, so both transports judge the same document.
 * Candidates past the request's limit are left out, as a conforming provider would.
 */
export function searchDocument(
  adapter: { name: string; scope: string },
  answer: SearchAnswer,
  limit: number,
): { [K in keyof ProviderResponse]: unknown } {
  return {
    schema_version: PROVIDER_RESPONSE_VERSION,
    provider: adapter.name,
    scope: adapter.scope,
    // Unchecked: an adapter's candidates are judged by the answer's schema like a provider's.
    candidates: Array.isArray(answer.candidates)
      ? answer.candidates.slice(0, limit)
      : answer.candidates,
    warnings: answer.warnings ?? [],
  };
}

export function describeDocument(
  adapter: { name: string; scope: string },
  description: ProviderDescription,
): DescribeResponse {
  return {
    schema_version: PROVIDER_DESCRIBE_VERSION,
    provider: adapter.name,
    scope: adapter.scope,
    actions: description.actions,
    filters: description.filters,
    protocol_versions: description.protocol_versions,
  };
}

export function healthDocument(
  adapter: { name: string; scope: string },
  health: HealthAnswer,
): HealthResponse {
  return {
    schema_version: PROVIDER_HEALTH_VERSION,
    provider: adapter.name,
    scope: adapter.scope,
    status: health.status,
    coverage: health.coverage,
    watermark: health.watermark,
    ...(health.document_count === undefined ? {} : { document_count: health.document_count }),
    ...(health.diagnostics === undefined ? {} : { diagnostics: health.diagnostics }),
  };
}

/** The expand answer, its text already cut to MAX_EXPAND_TEXT_CHARS (cutText). */
export function expandDocument(
  adapter: { name: string; scope: string },
  locatorAsked: string,
  evidence: Evidence,
): ExpandResponse {
  const { text, cut } = cutText(evidence.text, MAX_EXPAND_TEXT_CHARS);
  return {
    schema_version: PROVIDER_EXPAND_VERSION,
    provider: adapter.name,
    scope: adapter.scope,
    locator: locatorAsked,
    title: evidence.title,
    text,
    content_type: evidence.content_type,
    retrieved_at: evidence.retrieved_at,
    ...(evidence.revision === undefined ? {} : { revision: evidence.revision }),
    ...(cut || evidence.truncated ? { truncated: true } : {}),
  };
}

/**
 * Cuts `text` to `max` code points, the truncation marker inside the bound. Unlike a snippet's
 * bound, whitespace is kept: evidence keeps its lines and paragraphs.
 */
export function cutText(text: string, max: number): { text: string; cut: boolean } {
  // UTF-16 length bounds the code point count from above: only long texts are counted.
  if (text.length <= max) return { text, cut: false };
  const points = Array.from(text);
  if (points.length <= max) return { text, cut: false };
  return {
    text: points.slice(0, max - TRUNCATION_MARKER.length).join("") + TRUNCATION_MARKER,
    cut: true,
  };
}
