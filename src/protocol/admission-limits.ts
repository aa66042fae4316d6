/**
 * The bounds that keep one caller or one provider from locking others out: places under a
 * provider's `max_concurrency`, request bodies in reading per client, and how clients are told
 * apart, each with the reason for its value, as in limits.ts.
 */
import { MAX_REQUEST_BODY_BYTES } from "./limits.ts";

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
