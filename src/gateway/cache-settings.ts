/**
 * The variables of the answer cache (docs/deploy.md, "The answer cache"): how much of an
 * instance's memory it may hold, and which Redis keeps public providers' answers. A message never
 * echoes the URL, which may carry a password.
 */
import { ConfigError } from "../protocol/config-error.ts";
import { DEFAULT_CACHE_MAX_BYTES } from "../protocol/state-limits.ts";
import { type Env, integer, text } from "./env-values.ts";
import { parseRedisUrl, REDIS_SCHEMES_TEXT } from "../state/redis-url.ts";

export type CacheVariables = {
  /** TRACEFETCH_CACHE_MAX_BYTES: the bound of this instance's LRU of answers. */
  maxBytes: number;
  /** TRACEFETCH_CACHE_URL: the Redis of public answers; null: the state's (TRACEFETCH_STATE_URL). */
  url: string | null;
};

export function cacheVariables(env: Env): CacheVariables {
  const url = text(env, "TRACEFETCH_CACHE_URL");
  if (url !== null) {
    if (parseRedisUrl(url) === null) {
      throw new ConfigError(
        `TRACEFETCH_CACHE_URL must be a ${REDIS_SCHEMES_TEXT} URL such as redis://127.0.0.1:6379/1 (the value is not shown: it may hold a password)`,
      );
    }
  }
  return {
    maxBytes: integer(env, "TRACEFETCH_CACHE_MAX_BYTES", 1, Number.MAX_SAFE_INTEGER) ??
      DEFAULT_CACHE_MAX_BYTES,
    url,
  };
}
