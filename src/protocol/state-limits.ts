/**
 * The limits of the shared state (docs/deploy.md, "Shared state"): how long a store may take, how
 * long an instance trusts what it read, the leases of flights, and the bounds of the Redis client
 * and the Durable Object class. Each with the reason for its value, as in limits.ts.
 */
/**
 * A shared store's answer to one operation (`TRACEFETCH_STATE_TIMEOUT_MS`): a store on the same
 * network answers in about a millisecond, so this is an outage, after which the operation is
 * answered from the instance's own memory; a search waits for at most one such operation.
 */
export const DEFAULT_STATE_TIMEOUT_MS = 250;

/** The longest `TRACEFETCH_STATE_TIMEOUT_MS`: past it a slow store would cost more than it saves. */
export const MAX_STATE_TIMEOUT_MS = 5_000;

/**
 * How long an instance reuses a provider's breaker as a store read it: at most a second, so a
 * search costs no round trip when its providers were read recently, and a suspension one instance
 * made reaches the others within a second and a round trip.
 */
export const MAX_MIRROR_AGE_MS = 1_000;

/**
 * While a store fails, one operation per this many ms tries it again and the others are answered
 * from memory at once: an unreachable store costs a search nothing, and the first success puts the
 * instance back on the store without a restart.
 */
export const STORE_RETRY_MS = 1_000;

/**
 * A flight's lease in a shared store: renewed every FLIGHT_RENEW_MS by the instance running the
 * search, so it lapses within two seconds of that instance dying, and a follower takes over.
 */
export const FLIGHT_LEASE_MS = 2_000;

/** How often a flight's leader renews its lease: four renewals per lease ride out a slow one. */
export const FLIGHT_RENEW_MS = 500;

/**
 * How long a follower's read of a flight may wait for the next event in a store that can wait
 * (a Durable Object): short enough to notice an orphaned flight well within a lease.
 */
export const FLIGHT_READ_WAIT_MS = 1_000;

/**
 * How often a follower asks a store that answers at once (Redis) for a flight's next events: a
 * search's answer reaches it within this much of its leader's, for a few cheap reads a second.
 */
export const FLIGHT_POLL_MS = 25;

/**
 * `TRACEFETCH_STATE_SECRET`, the HMAC key of every key derived from a search or a caller: 32
 * bytes, as long as the SHA-256 output, so the key is never the weaker part (RFC 2104, section 3).
 */
export const MIN_STATE_SECRET_BYTES = 32;

/** `TRACEFETCH_STATE_PREFIX`'s default: every key of the gateway in a shared Redis starts so. */
export const DEFAULT_STATE_PREFIX = "tracefetch:";

/**
 * A provider's breaker in a shared Redis expires this long after the last moment it names (its
 * suspension's end, its probe claim's end), or after its last step when it names neither: garbage
 * collection only, so a suspension or a claim never lapses early. An hour without a step is a
 * provider no search has tried for an hour (removed from the manifest, or the gateway idle); it
 * then starts afresh, as after a success: its failures count from zero and its backoff from 5 s.
 */
export const STORED_BREAKER_IDLE_MS = 3_600_000;

/**
 * How long opening a connection to a shared Redis may take: one on the same network accepts within
 * milliseconds, so past this the host drops packets, and the attempt is given up and made again in
 * the background. Operations never wait for it: while disconnected they fail at once.
 */
export const REDIS_CONNECT_TIMEOUT_MS = 1_000;

/**
 * The first pause before reconnecting to a shared Redis, doubled on each failed attempt: a Redis
 * restarted on the same host is back within milliseconds, and a loopback refusal costs nothing.
 */
export const REDIS_RECONNECT_FIRST_MS = 10;

/**
 * The longest pause between attempts to reconnect to a shared Redis: half of STORE_RETRY_MS, so
 * once Redis is back the connection is too by the time an operation tries the store again.
 */
export const REDIS_RECONNECT_MAX_MS = STORE_RETRY_MS / 2;

/**
 * A command to a shared Redis with no reply this long after it was sent is settled as failed: by
 * then GuardedState abandoned it (no timeout is longer than MAX_STATE_TIMEOUT_MS), so a Redis that
 * keeps its connection open but stops answering holds at most this much of commands in memory.
 */
export const REDIS_COMMAND_TIMEOUT_MS = MAX_STATE_TIMEOUT_MS;

/**
 * How long closing a Redis store waits for QUIT's reply before it drops the connection: a Redis
 * that answers does so within milliseconds, and closing never hangs on one that does not.
 */
export const REDIS_QUIT_MS = 500;

/**
 * An instance that found another asking a provider's describe or health (the store's lease) looks
 * in the store again after this long: the other's answer is usually there well within it.
 */
export const SHARED_PROBE_RECHECK_MS = 250;

/**
 * A flight object's alarm, the backstop that deletes a flight whose leader died, fires this long
 * after the claim (and again after each lease the flight outlived): longer than most searches
 * last, so a flight that ends as it should has deleted the alarm before it fires, and costs no
 * alarm invocation; a dead leader's lease and events are gone within a minute of its last renewal.
 */
export const FLIGHT_SWEEP_MS = 60_000;

/**
 * How long a flight object keeps an ended flight's events in memory once its storage is deleted:
 * a follower between two reads (a round trip and a poll) comes back well within it; one that comes
 * later reads `orphaned` and runs the search itself.
 */
export const FLIGHT_ENDED_KEEP_MS = 5_000;

/**
 * The Durable Objects the callers' search logs are spread over, one chosen by the caller's digest:
 * one object serves about a thousand calls a second, so 32 carry tens of thousands of searches a
 * second, while each holds many callers and one alarm sweeps them all.
 */
export const CALLER_SHARDS = 32;

/**
 * Callers whose search logs one instance keeps in memory (without a shared store, or while it
 * fails): beyond it the caller idle longest is forgotten first, so an address sweep costs memory
 * bounded by this, at the price of that caller's log starting afresh.
 */
export const MAX_MEMORY_CALLERS = 100_000;

/**
 * The largest answer the cache keeps, as JSON: a provider's answer is at most 2,000,000 bytes as
 * sent, but one this large after sanitising would evict hundreds of ordinary ones, and a Redis
 * value this size costs its round trip more than asking the provider saves.
 */
export const MAX_CACHED_ANSWER_BYTES = 256 * 1024;

/**
 * TRACEFETCH_CACHE_MAX_BYTES's default: what one instance's memory holds of cached answers (an
 * LRU), small beside the in-flight searches' byte budgets (64 of 16 MB each at worst).
 */
export const DEFAULT_CACHE_MAX_BYTES = 64 * 1024 * 1024;

/**
 * How long a provider's cache generation lives in the store after its last write or refresh:
 * longer than any entry may (MAX_CACHE_TTL_SECONDS), so a generation never lapses under a live
 * entry; one that lapses or is evicted only makes the entries under it unreachable.
 */
export const CACHE_GENERATION_TTL_MS = 2 * 86_400_000;

/**
 * What one provider's cache object (`cache:<provider>`, a Durable Object on Workers) keeps of its
 * answers, as UTF-8 bytes of their JSON: past it the answer stored longest ago is deleted first.
 * Sixty-four of the largest answers (MAX_CACHED_ANSWER_BYTES), thousands of ordinary ones; an
 * object reads all of it once when it wakes (its index is rebuilt in memory), which at this size
 * takes milliseconds, and a provider's cache costs at most this much of stored data.
 */
export const MAX_CACHE_OBJECT_BYTES = 16 * 1024 * 1024;

/**
 * How many answers one provider's cache object keeps: its in-memory index holds a small record per
 * answer, and with tiny answers the byte bound alone would let it grow to hundreds of thousands.
 */
export const MAX_CACHE_OBJECT_ENTRIES = 4_096;
