/**
 * W3C traceparent values (Trace Context, level 1): a trace id for a search and a span id for each
 * of its attempts, drawn from a pool of random bytes.
 */
const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));

/**
 * Random bytes drawn ahead for trace ids: on Node one getRandomValues call costs about as much
 * (18 µs) for 48 bytes as for 4 KiB, so a search takes its bytes from a pool refilled every few
 * dozen searches rather than making a call of its own.
 */
const RANDOM_POOL_BYTES = 4096;
let pool = new Uint8Array(0);
let pooled = 0;

function randomBytes(count: number): Uint8Array {
  if (pooled + count > pool.length) {
    pool = crypto.getRandomValues(new Uint8Array(Math.max(RANDOM_POOL_BYTES, count)));
    pooled = 0;
  }
  pooled += count;
  return pool.subarray(pooled - count, pooled);
}

function hexOf(bytes: Uint8Array, from: number, to: number): string {
  let out = "";
  for (let i = from; i < to; i++) out += HEX[bytes[i] as number];
  return out;
}

/** W3C traceparent values: one trace id for the search, a span id per attempt. */
export function traceContexts(attempts: number): string[] {
  const bytes = randomBytes(16 + 8 * attempts);
  const traceId = hexOf(bytes, 0, 16);
  return Array.from(
    { length: attempts },
    (_, i) => `00-${traceId}-${hexOf(bytes, 16 + 8 * i, 24 + 8 * i)}-01`,
  );
}
