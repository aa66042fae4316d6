/**
 * Every bound of the gateway, its CLI and its kit, each with the reason for its value. No other
 * file under src/ holds a literal limit: import it from here so a reviewer sees all of them in one
 * place. The example providers under providers/ stand for outside authors and keep their own
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
 * Traces waiting for their sink (`TRACEFETCH_TRACE_BACKLOG`): a minute of busy traffic rides out a
 * slow sink, and at MAX_TRACE_BYTES each the backlog stays a few MiB in the common case; past it
 * the oldest trace is dropped and counted.
 */
export const DEFAULT_TRACE_BACKLOG = 1_000;

/**
 * One trace, as JSON: a Workers Queue message holds at most 128 KB, and a search's merged list at
 * its 100-entry limit fits with room; a larger trace loses merged entries from the end and says so.
 */
export const MAX_TRACE_BYTES = 64 * 1024;

/** Traces written to a sink at once: a Workers Queue `sendBatch` takes at most 100 messages. */
export const MAX_TRACE_BATCH = 100;

/**
 * The JSON of one batch: under a Workers Queue batch's 256 KB, and a webhook body (the batch as a
 * JWS, a third larger in base64url) stays under 256 KiB.
 */
export const MAX_TRACE_BATCH_BYTES = 180 * 1024;

/**
 * A webhook must answer a batch within this (`TRACEFETCH_TRACE_WEBHOOK_TIMEOUT_MS`): a collector
 * that only stores the body answers in milliseconds; one that does not is failing.
 */
export const DEFAULT_TRACE_WEBHOOK_TIMEOUT_MS = 5_000;

/** The longest webhook timeout one may set: a drain must end within Workers' 30 s `waitUntil`. */
export const MAX_TRACE_WEBHOOK_TIMEOUT_MS = 10_000;

/**
 * A drain starts no new batch after this long; with the longest webhook timeout it ends within
 * Workers' 30 s `waitUntil`, and the next search's drain takes over.
 */
export const TRACE_DRAIN_BUDGET_MS = 10_000;

/** What is read of a webhook's answer: only its status matters, so a small body, then cancel. */
export const MAX_TRACE_WEBHOOK_ANSWER_BYTES = 4_096;

/**
 * After a sink fails, it is asked again no sooner than this: recovery shows within a second,
 * and a sink that is down costs one request a second, not one per search.
 */
export const TRACE_SINK_RETRY_MS = 1_000;

/**
 * The JSONL trace file is rotated once it would pass this (`TRACEFETCH_TRACE_FILE_MAX_BYTES`):
 * tens of thousands of traces, small enough to copy and replay whole.
 */
export const DEFAULT_TRACE_FILE_MAX_BYTES = 64 * 1_048_576;

/** Rotated trace files kept beside the current one (FILE.1 ... FILE.3): disk use stays bounded. */
export const TRACE_FILES_KEPT = 3;

/** The HMAC key of traces (`TRACEFETCH_TRACE_SECRET`): 256 bits, as HS256 asks (RFC 7518 section 3.2). */
export const MIN_TRACE_SECRET_BYTES = 32;

/** A sink failure's reason in `health`: enough for "webhook answered 503", never a body. */
export const MAX_SINK_REASON_CHARS = 120;

/** Rank-biased overlap's persistence in `tracefetch replay`: the top 10 carry about 86% of the weight. */
export const REPLAY_RBO_P = 0.9;

/** The depth of replay's overlap: what a person or an agent reads of a result list. */
export const REPLAY_OVERLAP_DEPTH = 10;

/**
 * A figure of `tracefetch replay --baseline` that falls by more than this (absolute, on a 0..1
 * scale) is a regression: above the noise of a few reordered ties, below any change worth having.
 */
export const REPLAY_REGRESSION_THRESHOLD = 0.02;

/**
 * A provider that succeeded when recorded and fails in more than this share of the replayed
 * searches makes `tracefetch replay` exit 2: a provider that is down (a refused connection) is not
 * a ranking result, and the figures beside it would mislead; a few failures are weather.
 */
export const REPLAY_MAX_FAILING_SHARE = 0.5;

/** Recorded searches replayed at once: enough to keep two cores busy, few enough to stay off any gate. */
export const REPLAY_CONCURRENCY = 4;

/** A trace file `tracefetch replay` reads whole: four full files at the default rotation size. */
export const MAX_REPLAY_FILE_BYTES = 256 * 1_048_576;

/** The changed searches `tracefetch replay` lists for a person, most changed first; --json has all. */
export const REPLAY_LISTED_QUERIES = 20;

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
 * How long a call that our deadline (or the caller's departure) cut short, a search attempt, an
 * expand or a refresh, keeps its place under the provider's `max_concurrency` after it returned:
 * the runtime has torn the connection down by then, and this gives the close a head start on the
 * next call the place lets through, longer than the jitter between two packets on one path and
 * than a busy provider's event loop takes to notice a close. The gate keeps the place (src/io/
 * gate.ts), and gets it back even where a runtime drops a timer left after an answer (Workers).
 */
export const PLACE_HELD_AFTER_ABORT_MS = 100;

/**
 * An expand or refresh granted its place with less than this share of the provider's timeout
 * left gives the place back unused and answers `overloaded`: the provider could not answer in
 * what is left, and a request it is given no time for only costs it work.
 */
export const MIN_PLACE_TIME_SHARE = 0.1;

/**
 * `retry_after_ms` of an expand or refresh that found no place at its provider in time: a place
 * frees as soon as any one of the provider's calls ends, so the queue moves at the pace of its
 * calls, not of its timeout; like OVERLOADED_RETRY_AFTER_MS, about one call, where a wait of a
 * whole provider timeout would leave the provider idle.
 */
export const PLACE_RETRY_AFTER_MS = 1_000;

/**
 * Request bodies one client address may have in reading at once: an agent's parallel calls, or a
 * small office behind one NAT, fit with room; a client holding more slow bodies open than this
 * locks out only itself.
 */
export const MAX_BODIES_IN_READ_PER_CLIENT = 32;

/**
 * Bytes buffered across every request body being read, charged as they arrive and given back when
 * the read ends: 64 bodies at the 1 MiB cap, within what a 128 MB Workers isolate can spare beside
 * its searches. Slow senders cost what they sent, not a place each; a body that would pass this is
 * refused like a full gateway, 429 `overloaded`.
 */
export const MAX_BODY_BYTES_IN_READ = 64 * 1_048_576;

/**
 * A refused request body of at most this many bytes in all (over its cap, or over the bytes in
 * reading) is read to its end and dropped before the refusal is sent, never buffered: a socket
 * closed with bytes unread is reset by the kernel, and a client that reads only once it has sent
 * would get the reset instead of its 413. Half the cap again covers a body that is a little too
 * large (a 1 MiB document with its JSON around it); a larger one is cancelled once this much is
 * read, as reading it to its end would cost more than its sender's reset.
 */
export const MAX_DRAINED_BODY_BYTES = MAX_REQUEST_BODY_BYTES + MAX_REQUEST_BODY_BYTES / 2;

/**
 * How long the rest of a refused body is read and dropped, within the body's own deadline: the
 * at most 512 KiB still to come arrives in 2 s at about 2 Mbit/s; a slower sender is cut off.
 */
export const BODY_DRAIN_MS = 2_000;

/**
 * An IPv6 client counts by its first 64 bits: a subscriber is given at least a /64 and a host picks
 * any address in it at will (RFC 4941 temporary addresses), so a longer prefix would let one host
 * be countless clients.
 */
export const CLIENT_IPV6_PREFIX_BITS = 64;

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
