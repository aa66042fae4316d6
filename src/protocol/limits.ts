/**
 * Every bound of the gateway, its CLI and its kit, each with the reason for its value; those of
 * one topic are beside this file (admission-limits.ts, state-limits.ts, trace-limits.ts,
 * fetch-limits.ts). No other
 * file under src/ holds a literal limit: import it from these, so a reviewer sees all of them in
 * one place. The example providers under providers/ stand for outside authors and keep their own
 * bounds beside their code.
 */

/** TraceFetch 1.0's stdout cap, counted after decompression: a gzip bomb must cost no more. */
export const MAX_PROVIDER_BODY_BYTES = 2_000_000;

/** One search may read at most this many decoded bytes across its attempts: bounded memory on a 128 MB Workers isolate. */
export const MAX_SEARCH_BODY_BYTES = 16_000_000;

/** Providers contacted by one search (`TRACEFETCH_MAX_PROVIDERS`); the Free Workers plan allows 50 subrequests. */
export const DEFAULT_MAX_PROVIDERS = 32;

/** Searches in flight per gateway instance (`TRACEFETCH_MAX_INFLIGHT`): beyond it we shed load with 429. */
export const DEFAULT_MAX_INFLIGHT = 64;

/** How long a shed caller should wait before retrying: about one typical search. */
export const OVERLOADED_RETRY_AFTER_MS = 1_000;

/** The longest wait a provider may ask of a caller (error body or Retry-After): past an hour a caller should look elsewhere, not sleep. */
export const MAX_PROVIDER_WAIT_MS = 3_600_000;

/** A search request body: far above any honest query, small enough to parse on an edge isolate. */
export const MAX_REQUEST_BODY_BYTES = 1_048_576;

/**
 * Request headers must arrive within this (`TRACEFETCH_HEADERS_TIMEOUT_MS`): an honest client sends
 * them in one packet; a slow one holds a socket and must not hold it for Node's default 60 s.
 */
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;

/**
 * A request body (at most MAX_REQUEST_BODY_BYTES) must arrive within this once its headers have
 * (`TRACEFETCH_BODY_TIMEOUT_MS`): 1 MiB in 10 s is under 1 Mbit/s, slower than any honest caller.
 */
export const DEFAULT_BODY_TIMEOUT_MS = 10_000;

/** How often Node checks the header and request deadlines: its 30 s default would let them overrun. */
export const CONNECTIONS_CHECK_INTERVAL_MS = 1_000;

/** The manifest file or binding: a thousand providers fit, a mistaken file upload does not. */
export const MAX_MANIFEST_BYTES = 1_048_576;

/** Query length in UTF-16 code units: long natural-language questions fit; documents pasted as queries do not. */
export const MAX_QUERY_CHARS = 2_000;

/** Results asked of each provider and kept in `merged`. */
export const MIN_LIMIT = 1;
export const MAX_LIMIT = 100;
export const DEFAULT_LIMIT = 8;

/** Host names in each domain filter list: a caller names a handful of sites; matching costs names × candidates. */
export const MAX_FILTER_DOMAINS = 32;

/** A host name's length, as DNS bounds it (RFC 1035: 255 octets on the wire, 253 written). */
export const MAX_HOST_NAME_CHARS = 253;
/** One DNS label (RFC 1035 section 2.3.4): at most 63 octets. */
export const MAX_HOST_LABEL_CHARS = 63;

/** HTML has six heading levels (h1 to h6): an anchor's level is one of them. */
export const MAX_HEADING_LEVEL = 6;

/** An HTTP status is three digits from 100 to 599 (RFC 9110 section 15). */
export const MIN_HTTP_STATUS = 100;
export const MAX_HTTP_STATUS = 599;

/** An MCP tool's name: at most 128 characters, as the specification's guidance for names says. */
export const MAX_MCP_TOOL_NAME_CHARS = 128;

/** The whole search's deadline, as TraceFetch 1.0 allowed at most five minutes per provider. */
export const MIN_TIMEOUT_MS = 1;
export const MAX_TIMEOUT_MS = 300_000;
export const DEFAULT_TIMEOUT_MS = 10_000;

/** Kept back from the caller's deadline so fusion and encoding finish before it fires. */
export const FUSION_RESERVE_MS = 25;

/** Consecutive retryable failures that suspend a provider: one bad second is not enough, five searches' waits are. */
export const SUSPEND_AFTER_FAILURES = 5;

/** The first suspension, doubled on each one after it: spares the next searches without losing a provider for a blip. */
export const SUSPENSION_BASE_MS = 5_000;

/** The longest suspension, doubled or asked for by a provider: a provider that recovered is back within two minutes. */
export const MAX_SUSPENSION_MS = 120_000;

/** A suspension probe's claim outlives the probe's deadline by this, the time from its claim to its start; a lapsed claim lets another probe start. */
export const SUSPENSION_PROBE_GRACE_MS = 1_000;

/** A background describe call: a provider that cannot say what it speaks in two seconds is taken as search-only v1 for now. */
export const DESCRIBE_TIMEOUT_MS = 2_000;

/** How long a provider's describe answer is trusted: what a provider speaks changes with a deploy, not within minutes. */
export const DESCRIBE_TTL_MS = 600_000;

/** The wait before a failed describe is asked again: soon enough to pick up a provider that came up, rare enough to cost nothing. */
export const DESCRIBE_RETRY_MS = 30_000;

/** How long a provider's health answer serves `/v1/doctor`: many callers cost one probe, and an outage shows within half a minute. */
export const HEALTH_TTL_MS = 30_000;

/** A health probe: a provider that cannot say how it is in five seconds reads as unavailable. */
export const HEALTH_TIMEOUT_MS = 5_000;

/** A provider's own timeout in the manifest; 0 means declared but disabled. */
export const MAX_PROVIDER_TIMEOUT_SECONDS = 300;
export const DEFAULT_PROVIDER_TIMEOUT_SECONDS = 60;

/**
 * A provider's `cache_ttl_seconds` and a caller's `max_age_seconds`: at most a day, as an index a
 * provider refreshes less often than daily is refreshed through `POST /v1/refresh`, which drops
 * its cached answers at once (docs/envelope.md, "Cached answers").
 */
export const MAX_CACHE_TTL_SECONDS = 86_400;
export const MAX_AGE_SECONDS = MAX_CACHE_TTL_SECONDS;

/** Concurrent calls of one provider across all searches of this instance, unless the manifest says otherwise. */
export const DEFAULT_PROVIDER_MAX_CONCURRENCY = 16;
export const MAX_PROVIDER_MAX_CONCURRENCY = 1_024;

/** Candidate fields, in code points: bounded output with the cut made visible. */
export const MAX_TITLE_CHARS = 300;
export const MAX_SNIPPET_CHARS = 1_600;
export const MAX_PUBLISHED_AT_CHARS = 100;
/** A locator is never cut (a cut locator points at the wrong page): longer ones drop the candidate. */
export const MAX_LOCATOR_CHARS = 2_000;
/** Appended inside the limit so the cut is visible to a reader. */
export const TRUNCATION_MARKER = " [truncated]";

/** The text an expand answer carries, in code points: a long article or spec page whole, yet bounded for an agent's context. */
export const MAX_EXPAND_TEXT_CHARS = 200_000;

/** A revision (a content hash, a version tag, an update time) in an expand request or answer: any of those fits with room. */
export const MAX_REVISION_CHARS = 128;

/** Diagnostics kept from a health answer: a few lines say what is wrong; more is a log, not a health answer. */
export const MAX_HEALTH_DIAGNOSTICS = 10;

/** Names kept from a describe answer's `actions` and `filters`, and `protocol_versions` entries: far more than exist, small enough to bound. */
export const MAX_DESCRIBE_LIST_ITEMS = 32;

/** Provider warnings kept per attempt, and their length in code points. */
export const MAX_WARNINGS = 20;
export const MAX_WARNING_CHARS = 500;

/** Metadata: enough for citations or stars, too little to smuggle a document or blow the stack. */
export const MAX_METADATA_KEYS = 32;
export const MAX_METADATA_KEY_CHARS = 100;
export const MAX_METADATA_DEPTH = 2;
export const MAX_METADATA_STRING_CHARS = 1_000;
export const MAX_METADATA_ARRAY_ITEMS = 20;

/** Provider error text shown to a caller, after redaction. */
export const MAX_DIAGNOSTIC_CHARS = 320;

/** Weighted reciprocal rank fusion's k: the value of the original RRF paper (Cormack et al., 2009). */
export const RRF_K = 60;

/** An incoming x-request-id is kept only when it matches this: safe in logs and headers. */
export const REQUEST_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

/** A streamed search sends a heartbeat this often while waiting: well under the 30-60 s idle timeouts of common proxies. */
export const HEARTBEAT_INTERVAL_MS = 15_000;

/**
 * Workers allow at most six connections per invocation to wait for response headers at once; we
 * queue the rest ourselves so the wait is honest (it counts against the attempt's deadline).
 */
export const WORKERS_MAX_PENDING_CONNECTIONS = 6;

/**
 * What the CLI reads of one gateway answer. An envelope repeats what its attempts read (at most
 * MAX_SEARCH_BODY_BYTES) in `candidates` and again in `merged`, so twice that budget fits every
 * honest answer with room for JSON escaping, and a runaway or hostile gateway costs no more.
 */
export const MAX_GATEWAY_ANSWER_BYTES = 32 * 1_048_576;

/** The CLI waits this long past a search's `timeout_ms`: fusion, encoding and the round trip. */
export const GATEWAY_GRACE_MS = 5_000;

/** `status`, `doctor` and `connect` are answered from memory; a gateway silent this long is not answering. */
export const GATEWAY_STATUS_TIMEOUT_MS = 5_000;

/** `doctor` reads /v1/doctor, whose health probes may take HEALTH_TIMEOUT_MS: twice that, then the gateway is not answering. */
export const GATEWAY_DOCTOR_TIMEOUT_MS = 10_000;

/** `expand` waits for one provider, whose own timeout may be up to MAX_PROVIDER_TIMEOUT_SECONDS; a little more covers the gateway. */
export const GATEWAY_EXPAND_TIMEOUT_MS = 305_000;

/** The start of an expanded text the CLI shows a person; --json prints it whole. */
export const EXPAND_PREVIEW_CHARS = 800;

/** A failing provider's error body is read only this far: enough for a code and a message. */
export const MAX_ERROR_BODY_BYTES = 65_536;

/** A provider request is one small JSON object (a query of MAX_QUERY_CHARS and a limit); anything larger is not one. */
export const MAX_PROVIDER_REQUEST_BYTES = 65_536;

/**
 * How much of what a third-party API sent (its error message, a content type it should not have
 * sent) a failure quotes: enough for "Bad credentials", not a page.
 */
export const MAX_QUOTED_CHARS = 160;

/** A manifest endpoint, in UTF-16 code units: as long as a locator, far beyond any real URL. */
export const MAX_ENDPOINT_CHARS = 2_000;

/** A provider's fusion weight: a thousand times the default is already "only this one counts". */
export const MAX_PROVIDER_WEIGHT = 1_000;

/**
 * Provider, scope and tier names in the manifest: long enough for any real name, short enough to
 * sit in URLs, logs and JWT audiences and to be echoed.
 */
export const MAX_NAME_CHARS = 64;

/** An environment binding's name in the manifest or the CLI: far beyond any real variable name. */
export const MAX_BINDING_CHARS = 128;

/** Provider, scope and tier names in a search request: as long as a manifest name, no longer. */
export const MAX_IDENTIFIER_CHARS = MAX_NAME_CHARS;

/**
 * How deep a thrown error's `cause` chain is walked for a code or a message: Node's fetch puts its
 * system error a level or two down, and a cyclic or runaway chain must not be walked forever.
 */
export const MAX_ERROR_CAUSE_DEPTH = 4;

/**
 * A setting's value quoted in the one-line error that refuses it: enough to recognise a typo,
 * short enough to stay one line.
 */
export const MAX_ECHOED_SETTING_CHARS = 64;

/**
 * Keep-alive connections to providers (Node): reused across searches, closed after idling this
 * long so idle sockets do not pile up.
 */
export const PROVIDER_KEEP_ALIVE_MS = 10_000;

/** A token larger than this is refused before any parsing: real tokens are well under 2 KiB. */
export const MAX_TOKEN_BYTES = 8 * 1024;

/** Clock skew tolerated on a token's exp, nbf and iat (an iat later than now plus this fails). */
export const CLOCK_TOLERANCE_SECONDS = 30;

/** A JWKS document is a few keys; 64 KiB bounds what an identity provider can make us hold. */
export const MAX_JWKS_BYTES = 64 * 1024;

/** A JWKS fetch gives up after this long; the gateway then answers 503 auth_unavailable. */
export const JWKS_TIMEOUT_MS = 5_000;

/** An unknown kid refetches the JWKS at most this often, so random kids cannot flood the IdP. */
export const JWKS_COOLDOWN_MS = 30_000;

/** Keys are refreshed at least this often so a rotation is picked up. */
export const JWKS_MAX_AGE_MS = 10 * 60_000;

/** HS256 is for development, and only with a secret of at least 256 bits (RFC 7518 section 3.2). */
export const MIN_HS256_SECRET_BYTES = 32;

/** A provider token outlives its attempt's budget by this much: enough for clock skew, no more. */
export const PROVIDER_TOKEN_SLACK_SECONDS = 5;

/** The CLI's table cuts titles to this many code points, so each row fits a common terminal. */
export const TITLE_COLUMN_CHARS = 48;

/**
 * Names an unknown-scope or unknown-provider message lists before "and N more": enough for any
 * manifest a person reads whole, short enough to read on one line.
 */
export const MAX_LISTED_NAMES = 20;

/**
 * An MCP tool's text content (docs/mcp.md) stops at this many characters, with a line saying so:
 * it goes into a model's context whole, and `structuredContent` carries the whole result. A
 * search of `limit` 10 takes about 4,000; an expand's evidence is what usually reaches it.
 */
export const MAX_MCP_TEXT_CHARS = 16_000;

/**
 * A result's snippet in an MCP search's text is cut to this many characters (at a word): enough
 * to judge a page by, and ten of them keep a search of `limit` 10 near 4,000 characters.
 */
export const MAX_MCP_SNIPPET_CHARS = 200;

/**
 * The gateway's own suspension probe (docs/protocol.md, "Suspension") answers within this, or
 * within the provider's timeout when that is shorter: the conformance check's timeout, which a
 * provider that passes it meets for its default query, and well inside the 30 s that Workers'
 * `waitUntil` gives the probe.
 */
export const SUSPENSION_PROBE_TIMEOUT_MS = 10_000;

/**
 * A word the conformance limit cases can expect candidates for, and the gateway's suspension probe
 * asks when a provider declares no health: web and paper search engines and this project's own
 * corpora hold it. Not "the": an engine that drops stopwords (the corpus provider does) rightly
 * finds nothing for it.
 */
export const DEFAULT_CONFORMANCE_QUERY = "search";

/**
 * Terms one `stats` answer, and the collection statistics a search carries, hold at most: the
 * longest judged query of the CISI collection (2,000 characters) reaches 111 distinct terms, so an
 * honest query fits with room, and the statistics stay a few kilobytes.
 */
export const MAX_STATS_TERMS = 256;

/**
 * A term in `stats`, in UTF-16 code units: the longest term of either judged collection has 28; a
 * longer token (a hash, an encoded blob) is no word whose frequencies shards need to share.
 */
export const MAX_STATS_TERM_CHARS = 64;

/**
 * A search request that carries collection statistics, as serveProvider reads it for an adapter
 * that answers `stats`: a request without them (MAX_PROVIDER_REQUEST_BYTES), and MAX_STATS_TERMS
 * entries of under 512 bytes each (a term of MAX_STATS_TERM_CHARS with every character escaped as
 * six bytes, two 16-digit counts, the field names). A provider without `stats` keeps the small cap.
 */
export const MAX_STATS_REQUEST_BYTES = MAX_PROVIDER_REQUEST_BYTES + MAX_STATS_TERMS * 512;

/**
 * The share of a score group member's attempt budget that the group's statistics round may take:
 * the sums are made once, when every member answered or this share ran out, so the search itself
 * keeps at least half its time; a member whose statistics come later is left out of the sums and
 * scores with its own.
 */
export const STATS_ROUND_BUDGET_SHARE = 0.5;

/**
 * The window of `caller_limits.searches_per_minute`: a sliding log, so no burst at a minute's edge
 * doubles the limit as a fixed window would.
 */
export const CALLER_SEARCH_WINDOW_MS = 60_000;

/**
 * The largest `caller_limits.searches_per_minute`: the log keeps one time per search admitted in
 * the window, so this bounds a caller's stored log to about 14 KB; a caller above about 16 searches
 * a second is a service, better given a token with no limit than a log this long.
 */
export const MAX_CALLER_SEARCHES_PER_MINUTE = 1_000;

/** The window of `caller_limits.cost_micros_per_day`: any 24 hours, a sliding log. */
export const CALLER_COST_WINDOW_MS = 86_400_000;

/**
 * A caller's cost log adds up what was admitted in each minute, one entry per minute: a day's log
 * is then at most 1,440 entries however many searches it holds, and a cost leaves the count at
 * most a minute late, never early, so no 24 hours ever hold more than the limit.
 */
export const CALLER_COST_BUCKET_MS = 60_000;

/**
 * The largest `caller_limits.cost_micros_per_day`: a million dollars a day in micros, past any
 * budget one caller is given, and small enough that every sum stays an exact double in Lua too.
 */
export const MAX_CALLER_COST_MICROS_PER_DAY = 1_000_000_000_000;
