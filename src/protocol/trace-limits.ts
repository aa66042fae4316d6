/**
 * The bounds of recorded traces (`TRACEFETCH_TRACE_*`, docs/deploy.md) and of `tracefetch replay`
 * (docs/cli.md), each with the reason for its value, as in limits.ts.
 */
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
