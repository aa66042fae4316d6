/**
 * Retry-After (RFC 9110 section 10.2.3), as an answer's header carries it: the wait the gateway,
 * the CLI and a provider's upstream helper read the same way.
 */

/** An HTTP-date (RFC 9110 section 5.6.7) in any of its three forms opens with the day's name. */
const HTTP_DATE = /^(mon|tue|wed|thu|fri|sat|sun)[a-z]*,?\s/i;

/**
 * Retry-After (RFC 9110 section 10.2.3): delay-seconds or an HTTP-date, as milliseconds from now;
 * null when it is neither. Delay-seconds of any length come back as a safe integer: past what one
 * holds, the wait is only "too long", which the classifier's cap turns into its maximum.
 */
export function parseRetryAfter(value: string | null, nowMs: number): number | null {
  if (value === null) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) {
    const ms = Number(trimmed) * 1000;
    return Number.isSafeInteger(ms) ? ms : Number.MAX_SAFE_INTEGER;
  }
  if (!HTTP_DATE.test(trimmed)) return null;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}
