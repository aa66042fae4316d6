/**
 * A caller's search log (docs/envelope.md, "Caller limits"): the times of the searches admitted in
 * a sliding window, and what they cost, added up by the minute; one pure step admits the next search
 * or says when one would be admitted. Every store runs it: in process, inside a Durable Object, and
 * in Redis as a Lua script (src/state/redis-log-script.ts).
 */
import { CALLER_COST_BUCKET_MS } from "../protocol/limits.ts";

/** What one search asks of its caller's log; a limit left out is neither checked nor logged. */
export type LogAsk = {
  /** At most `limit` searches in any `windowMs`. */
  searches?: { limit: number; windowMs: number };
  /** At most `limit` micros in any `windowMs`; this search costs `micros`. */
  cost?: { limit: number; windowMs: number; micros: number };
};

/** The manifest's name of the limit a refused search met. */
export type LogLimit = "searches_per_minute" | "cost_micros_per_day";

/** Admitted (and logged), or refused with the limit met and the wait until it would be admitted. */
export type LogVerdict =
  | { admitted: true }
  | { admitted: false; limit: LogLimit; retryAfterMs: number };

/**
 * The times of admitted searches, in the order logged; the cost admitted in each bucket of
 * CALLER_COST_BUCKET_MS, `[start, micros]`, oldest first.
 */
export type SearchLog = { times: number[]; costs: Array<[number, number]> };

export const EMPTY_LOG: SearchLog = { times: [], costs: [] };

/**
 * The log as it reads at `now`, with this search in it when every limit asked admits it; else the
 * log without it and the longest wait (on a tie, the searches'). A time `t` counts while
 * `now < t + windowMs`; a cost bucket starting at `s` while `now < s + CALLER_COST_BUCKET_MS +
 * windowMs`.
 */
export function searchLogStep(
  log: SearchLog,
  now: number,
  ask: LogAsk,
): { log: SearchLog; verdict: LogVerdict } {
  const { searches, cost } = ask;
  const times = searches ? log.times.filter((t) => now < t + searches.windowMs) : log.times;
  const costs = cost
    ? log.costs.filter(([start]) => now < start + CALLER_COST_BUCKET_MS + cost.windowMs)
    : log.costs;
  let refused: LogVerdict | null = null;
  if (searches && times.length >= searches.limit) {
    // Admitted once all but limit - 1 of these left the window.
    const leaving = times[times.length - searches.limit] as number;
    const wait = leaving + searches.windowMs - now;
    refused = { admitted: false, limit: "searches_per_minute", retryAfterMs: wait };
  }
  const costWait = cost ? costRefusal(costs, now, cost) : null;
  if (costWait !== null && (refused === null || costWait > refused.retryAfterMs)) {
    refused = { admitted: false, limit: "cost_micros_per_day", retryAfterMs: costWait };
  }
  if (refused !== null) return { log: { times, costs }, verdict: refused };
  const next: SearchLog = { times: searches ? [...times, now] : times, costs };
  if (cost && cost.micros > 0) next.costs = addCost(costs, now, cost.micros);
  return { log: next, verdict: { admitted: true } };
}

/** When everything the log holds will have left its window, for `ask`'s windows; 0 when empty. */
export function logUntil(log: SearchLog, ask: LogAsk): number {
  const time = log.times[log.times.length - 1];
  const bucket = log.costs[log.costs.length - 1];
  return Math.max(
    time !== undefined && ask.searches ? time + ask.searches.windowMs : 0,
    bucket !== undefined && ask.cost ? bucket[0] + CALLER_COST_BUCKET_MS + ask.cost.windowMs : 0,
  );
}

/** The wait until `micros` more fit under the limit; null when they fit now. */
function costRefusal(
  costs: ReadonlyArray<[number, number]>,
  now: number,
  cost: NonNullable<LogAsk["cost"]>,
): number | null {
  const spent = costs.reduce((sum, [, micros]) => sum + micros, 0);
  if (cost.micros === 0 || spent + cost.micros <= cost.limit) return null;
  // A search that costs more than the whole limit never fits: told to come back a window later.
  if (cost.micros > cost.limit) return cost.windowMs;
  let freed = 0;
  for (const [start, micros] of costs) {
    freed += micros;
    if (spent - freed + cost.micros <= cost.limit) {
      return start + CALLER_COST_BUCKET_MS + cost.windowMs - now;
    }
  }
  return cost.windowMs;
}

/** The buckets with `micros` added to the one `now` falls in. */
function addCost(
  costs: ReadonlyArray<[number, number]>,
  now: number,
  micros: number,
): Array<[number, number]> {
  const start = now - (now % CALLER_COST_BUCKET_MS);
  const last = costs[costs.length - 1];
  if (last !== undefined && last[0] === start) {
    return [...costs.slice(0, -1), [start, last[1] + micros]];
  }
  return [...costs, [start, micros]];
}
