/**
 * The variables of the answer cache (docs/deploy.md, "The answer cache"): how much of an
 * instance's memory it may hold, and which Redis keeps public providers' answers. A message never
 * echoes the URL, which may carry a password.
 */
import { DEFAULT_CACHE_MAX_BYTES } from "../protocol/state-limits.ts";
import { type Env, positive, readVariables, url } from "./env-values.ts";

export type CacheVariables = {
  /** TRACEFETCH_CACHE_MAX_BYTES: the bound of this instance's LRU of answers. */
  maxBytes: number;
  /** TRACEFETCH_CACHE_URL: the Redis of public answers; null: the state's (TRACEFETCH_STATE_URL). */
  url: string | null;
};

/** The answer cache's variables, each described by its schema. */
const CACHE_VARIABLES = {
  TRACEFETCH_CACHE_MAX_BYTES: positive,
  TRACEFETCH_CACHE_URL: url({ kind: "redis", example: "redis://127.0.0.1:6379/1" }),
};

export function cacheVariables(env: Env): CacheVariables {
  const read = readVariables(env, CACHE_VARIABLES);
  return {
    maxBytes: read.TRACEFETCH_CACHE_MAX_BYTES ?? DEFAULT_CACHE_MAX_BYTES,
    url: read.TRACEFETCH_CACHE_URL,
  };
}
