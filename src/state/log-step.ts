/**
 * A caller's search log as a shard step (shard-steps.ts keeps the others): apart, so that the
 * memory adapter, which loads the search log only once caller limits are configured, keeps it out
 * of the worker's main module.
 */
import {
  EMPTY_LOG,
  type LogAsk,
  logUntil,
  type LogVerdict,
  searchLogStep,
} from "../core/search-log.ts";
import { CALLER, type ShardKv, type Step, type StoredLog } from "./shard-steps.ts";

export function logSearch(kv: ShardKv, now: number, key: string, ask: LogAsk): Step<LogVerdict> {
  const before = kv.get<StoredLog>(CALLER + key)?.log ?? EMPTY_LOG;
  const { log, verdict } = searchLogStep(before, now, ask);
  // A refusal writes nothing.
  if (!verdict.admitted) return { result: verdict };
  const until = logUntil(log, ask);
  kv.put(CALLER + key, { log, until } satisfies StoredLog);
  return { result: verdict, sweepBy: until };
}
