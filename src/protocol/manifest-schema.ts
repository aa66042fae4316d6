/**
 * The provider manifest `tracefetch.providers.v1`, HTTP edition (docs/protocol.md).
 *
 * The valibot schema is the shape (and the source of schemas/provider-manifest.json); the rules that
 * span fields (unique names, reserved names, endpoint policy, sensitivity and auth) live in
 * `validateManifest`, which is the authority.
 */
import * as v from "valibot";
import {
  DEFAULT_PROVIDER_MAX_CONCURRENCY,
  DEFAULT_PROVIDER_TIMEOUT_SECONDS,
  MAX_BINDING_CHARS,
  MAX_CACHE_TTL_SECONDS,
  MAX_CALLER_COST_MICROS_PER_DAY,
  MAX_CALLER_SEARCHES_PER_MINUTE,
  MAX_ENDPOINT_CHARS,
  MAX_HOST_NAME_CHARS,
  MAX_NAME_CHARS,
  MAX_PROVIDER_MAX_CONCURRENCY,
  MAX_PROVIDER_TIMEOUT_SECONDS,
  MAX_PROVIDER_WEIGHT,
} from "./limits.ts";
import { SENSITIVITIES } from "./codes.ts";
import { MAX_FETCH_POLICY_ENTRIES } from "./fetch-limits.ts";
import { HOST_NAME } from "./search-filters.ts";
import { type McpMapping, McpMappingSchema } from "./mcp-mapping.ts";

export const MANIFEST_VERSION = "tracefetch.providers.v1";

/** Provider names and scopes: lowercase identifiers that are safe in URLs, logs and JWT audiences. */
export const NAME_PATTERN = new RegExp(`^[a-z][a-z0-9_-]{0,${MAX_NAME_CHARS - 1}}$`);
/** An environment binding's name, never its value. */
export const BINDING_PATTERN = new RegExp(`^[A-Z_][A-Z0-9_]{0,${MAX_BINDING_CHARS - 1}}$`);

const Name = v.pipe(v.string(), v.regex(NAME_PATTERN));

const ProviderAuth = v.variant("type", [
  v.strictObject({ type: v.literal("none") }),
  v.strictObject({ type: v.literal("gateway-token") }),
  v.strictObject({
    type: v.literal("bearer"),
    secret: v.pipe(v.string(), v.regex(BINDING_PATTERN)),
  }),
]);
export type ProviderAuth = v.InferOutput<typeof ProviderAuth>;

export const ProviderEntrySchema = v.strictObject({
  name: Name,
  scope: Name,
  endpoint: v.optional(v.pipe(v.string(), v.maxLength(MAX_ENDPOINT_CHARS))),
  /** How the endpoint is spoken to: the provider protocol (the default) or an MCP search tool. */
  transport: v.optional(v.picklist(["http", "mcp"])),
  /** For `transport: "mcp"`: the tool, its arguments and how its answer maps to candidates. */
  mcp: v.optional(McpMappingSchema),
  timeout_seconds: v.optional(
    v.pipe(v.number(), v.minValue(0), v.maxValue(MAX_PROVIDER_TIMEOUT_SECONDS)),
    DEFAULT_PROVIDER_TIMEOUT_SECONDS,
  ),
  sensitivity: v.optional(v.picklist(SENSITIVITIES), "public"),
  source_class: v.optional(v.pipe(v.string(), v.regex(NAME_PATTERN)), "candidate"),
  isolated: v.optional(v.boolean(), false),
  cost_micros: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0)), 0),
  weight: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(MAX_PROVIDER_WEIGHT)), 1),
  /** Providers naming the same group are shards of one index: fused by their `metadata.score`. */
  score_group: v.optional(Name),
  max_concurrency: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(MAX_PROVIDER_MAX_CONCURRENCY)),
    DEFAULT_PROVIDER_MAX_CONCURRENCY,
  ),
  auth: v.optional(ProviderAuth),
  /** How long a successful answer may be served from the cache; 0: never cached. */
  cache_ttl_seconds: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(MAX_CACHE_TTL_SECONDS)),
    0,
  ),
});

export const TierSchema = v.strictObject({
  cost_ceiling_micros: v.pipe(v.number(), v.integer(), v.minValue(0)),
});

/**
 * What one caller may do (docs/envelope.md, "Caller limits"), on every instance together; a caller
 * is a token's `sub`, else the client address. Each limit is optional: absent, unbounded.
 */
export const CallerLimitsSchema = v.strictObject({
  /** Searches (expands and fetches included) in any 60 s, a sliding log. */
  searches_per_minute: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(MAX_CALLER_SEARCHES_PER_MINUTE)),
  ),
  /** The `cost_micros` searches' plans declare, in any 24 h. */
  cost_micros_per_day: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(MAX_CALLER_COST_MICROS_PER_DAY)),
  ),
});
export type CallerLimits = v.InferOutput<typeof CallerLimitsSchema>;

/**
 * A domain of the fetch policy, lowercase ASCII (an internationalised name in its `xn--` form): it
 * stands for itself and every name under it.
 */
export const DOMAIN_PATTERN = HOST_NAME;

const Domains = v.pipe(
  v.array(v.pipe(v.string(), v.maxLength(MAX_HOST_NAME_CHARS), v.regex(DOMAIN_PATTERN))),
  v.maxLength(MAX_FETCH_POLICY_ENTRIES),
);

/**
 * Fetching pages (docs/security.md, "Fetching pages"): present, `/v1/fetch` answers; absent, it
 * answers `fetch_disabled`. Every field is optional; an empty block fetches public pages only.
 */
export const FetchBlockSchema = v.strictObject({
  /** Private ranges (CIDR, or one address) pages may be fetched from, e.g. an intranet's. */
  allow_private_cidrs: v.optional(
    v.pipe(v.array(v.string()), v.maxLength(MAX_FETCH_POLICY_ENTRIES)),
    [],
  ),
  /** Domains never fetched (with every name under them), even when allow_domains lists them. */
  deny_domains: v.optional(Domains, []),
  /** When not empty, the only domains fetched (with every name under them). */
  allow_domains: v.optional(Domains, []),
});
/** The fetch block as written, defaults applied; src/evidence reads the ranges into a policy. */
export type FetchBlock = v.InferOutput<typeof FetchBlockSchema>;

export const ManifestSchema = v.strictObject({
  schema_version: v.literal(MANIFEST_VERSION),
  providers: v.array(ProviderEntrySchema),
  tiers: v.optional(v.record(Name, TierSchema)),
  default_tier: v.optional(Name),
  caller_limits: v.optional(CallerLimitsSchema),
  fetch: v.optional(FetchBlockSchema),
});

type ParsedEntry = v.InferOutput<typeof ProviderEntrySchema>;

/** One provider after validation: every default applied, auth resolved. */
export type ProviderSpec = Omit<ParsedEntry, "auth" | "endpoint" | "transport" | "mcp"> & {
  auth: ProviderAuth;
  /** Absent for built-ins. */
  endpoint?: string;
  /** Where it runs: in process (reserved name, no endpoint), over HTTP, or as an MCP tool. */
  transport: "builtin" | "http" | "mcp";
  /** Present exactly when the transport is `mcp`. */
  mcp?: McpMapping;
};

export type Manifest = {
  providers: ProviderSpec[];
  tiers: Record<string, { cost_ceiling_micros: number }>;
  default_tier: string | null;
  /** Absent: no caller is limited. */
  caller_limits?: CallerLimits;
  /** Absent: fetching pages is off (`fetch_disabled`). */
  fetch?: FetchBlock;
};
