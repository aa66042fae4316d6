/**
 * robots.txt answers kept per origin (RFC 9309 section 2.4), bounded in count and age, for one
 * gateway instance: a site is asked for its robots.txt at most once a day per instance.
 */
import { LRUCache } from "lru-cache";
import {
  ROBOTS_CACHE_CHARS,
  ROBOTS_CACHE_ENTRIES,
  ROBOTS_CACHE_TTL_MS,
} from "../protocol/fetch-limits.ts";

/**
 * What one origin's robots.txt says: its rules (parsed once; `chars`, the text's length, is what it
 * costs the cache), everything allowed (a 4xx: `unavailable`), or nothing allowed (a 5xx, RFC 9309
 * section 2.3.1.4).
 */
export type RobotsAnswer =
  | { kind: "rules"; rules: ReturnType<typeof import("robots-parser").default>; chars: number }
  | { kind: "allow_all"; unavailable: true }
  | { kind: "disallow_all"; unavailable: true };

export type RobotsCache = {
  get: (origin: string) => RobotsAnswer | undefined;
  set: (origin: string, answer: RobotsAnswer, ttlMs?: number) => void;
};

/**
 * A cache of robots.txt answers by origin, bounded in entries and in the characters of the rules
 * it holds, the least recently used dropped first.
 */
export function createRobotsCache(
  entries = ROBOTS_CACHE_ENTRIES,
  ttlMs = ROBOTS_CACHE_TTL_MS,
): RobotsCache {
  const cache = new LRUCache<string, RobotsAnswer>({
    max: entries,
    ttl: ttlMs,
    maxSize: ROBOTS_CACHE_CHARS,
    sizeCalculation: (answer) => answer.kind === "rules" ? Math.max(1, answer.chars) : 1,
  });
  return {
    get: (origin) => cache.get(origin),
    set: (origin, answer, ttl) => {
      cache.set(origin, answer, ttl === undefined ? undefined : { ttl });
    },
  };
}
