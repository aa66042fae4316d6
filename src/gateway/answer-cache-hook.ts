/**
 * What the answer cache keeps of a search, and for whom (docs/envelope.md, "Cached answers").
 * Loaded by a dynamic import only when a manifest entry declares `cache_ttl_seconds`: on Workers a
 * module of its own, so a gateway that caches nothing carries none of it.
 *
 * An attempt's identity is the canonical JSON of the provider's manifest entry (any change to it
 * is another provider), of the request as the provider was sent it (protocol version, query,
 * limit, scope, filters) and, for a provider that is not public or receives gateway tokens, of the
 * caller's entitlements and `sub`, as coalescing keys it (search-identity.ts).
 */
import type { AnswerCacheHook, CacheTicket } from "../core/cached-attempt.ts";
import type { AttemptRecord } from "../protocol/envelope-schema.ts";
import type { ProviderSpec } from "../protocol/manifest-schema.ts";
import type { SearchRequest } from "../protocol/search-request.ts";
import { MAX_CACHED_ANSWER_BYTES } from "../protocol/state-limits.ts";
import { type Caller, subjectOf } from "../core/caller.ts";
import type { CacheLookup } from "../state/answer-cache.ts";
import type { PlacedAnswers } from "./answer-places.ts";
import { canonicalJson, entitlementsOf, isPublic } from "./search-identity.ts";

export { MemoryAnswerCache } from "../state/answer-cache.ts";
export { PlacedAnswers } from "./answer-places.ts";

/** The provider protocol's major version, part of every identity: a v2 answer is another answer. */
const PROTOCOL_VERSION = 1;

const MISS: CacheLookup = { generation: null, found: null };

/** Each manifest entry's canonical JSON, made once: specs live as long as the gateway. */
const entryJson = new WeakMap<ProviderSpec, string>();

function entryOf(spec: ProviderSpec): string {
  let text = entryJson.get(spec);
  if (text === undefined) entryJson.set(spec, text = canonicalJson(spec));
  return text;
}

export type HookContext = {
  cache: PlacedAnswers;
  request: SearchRequest;
  caller: Caller;
  now: () => number;
  /** Runs a write in the search's background (`waitUntil` on Workers): no answer waits for it. */
  later: (work: () => Promise<void>) => void;
  /** What is left of the search's budget, which bounds each lookup in a store. */
  budgetMs?: (() => number) | undefined;
};

export function answerCacheHook(context: HookContext): AnswerCacheHook {
  const { cache, request, caller, now, later, budgetMs } = context;
  const { query, limit, scope, filters, max_age_seconds } = request;
  const asked = canonicalJson({ version: PROTOCOL_VERSION, query, limit, scope, filters });
  // Absent: any answer the cache still holds; 0: none, but the provider's new answer is kept.
  const maxAgeMs = max_age_seconds === undefined ? Infinity : max_age_seconds * 1000;
  // The caller's part of a personal identity: the same for every provider, so made once.
  let callerJson: string | null = null;
  const whoAsks = () =>
    callerJson ??= canonicalJson({
      entitlements: entitlementsOf(caller),
      sub: subjectOf(caller),
    });
  const tickets = new Map<string, CacheTicket | null>();
  const open = (spec: ProviderSpec): CacheTicket | null => {
    let ticket = tickets.get(spec.name);
    if (ticket === undefined) tickets.set(spec.name, ticket = ticketFor(spec));
    return ticket;
  };
  return {
    open,
    warm(run: readonly ProviderSpec[]): void {
      for (const spec of run) open(spec);
    },
    answersAll(run: readonly ProviderSpec[]): Promise<boolean> | null {
      // A score group member may be sent the group's statistics, which no cached answer reflects.
      if (maxAgeMs === 0 || run.some((spec) => spec.score_group !== undefined)) return null;
      const hits: Array<Promise<AttemptRecord | null>> = [];
      for (const spec of run) {
        const ticket = open(spec);
        if (ticket === null) return null;
        hits.push(ticket.hit);
      }
      return Promise.all(hits).then((records) => records.every((r) => r !== null));
    },
  };

  function ticketFor(spec: ProviderSpec): CacheTicket | null {
    const ttlSeconds = spec.cache_ttl_seconds ?? 0;
    if (ttlSeconds <= 0) return null;
    const shared = isPublic(spec);
    // Canonical JSON of {provider, request} and, for a provider whose answer depends on who asks,
    // {entitlements, sub}: built from parts already canonical.
    const personal = shared ? "" : `,"caller":${whoAsks()}`;
    const identity = `{"provider":${entryOf(spec)},"request":${asked}${personal}}`;
    const started = now();
    const looked = cache.lookup(spec.name, identity, shared, budgetMs?.()).catch(() => MISS);
    return {
      hit: looked.then(({ found }) => {
        if (found === null || maxAgeMs === 0 || found.ageMs > maxAgeMs) return null;
        const record = storedRecord(found.text, spec);
        if (record === null) return null;
        record.latency_ms = Math.max(0, Math.round(now() - started));
        record.cached = true;
        record.age_ms = Math.max(0, Math.round(found.ageMs));
        return record;
      }),
      keep(record: AttemptRecord): void {
        // Failures and answers the gateway cut short (over a byte budget, a deadline) are
        // failures here; only a whole successful answer, an honest empty included, is kept.
        if (record.outcome !== "success" || record.code !== "ok" || record.cached) return;
        const text = JSON.stringify(record);
        // UTF-16 units bound UTF-8 bytes from below: only a text near the bound is encoded.
        if (text.length > MAX_CACHED_ANSWER_BYTES) return;
        if (
          3 * text.length > MAX_CACHED_ANSWER_BYTES && utf8Bytes(text) > MAX_CACHED_ANSWER_BYTES
        ) {
          return;
        }
        later(async () => {
          const lookup = await looked;
          await cache.keep(spec.name, identity, lookup, text, ttlSeconds * 1000, shared);
        });
      },
    };
  }
}

/** A stored record, if it is one this provider's successful attempt could have made. */
function storedRecord(text: string, spec: ProviderSpec): AttemptRecord | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  const record = value as Partial<AttemptRecord> | null;
  if (
    record === null || typeof record !== "object" || record.provider !== spec.name ||
    record.outcome !== "success" || !Array.isArray(record.candidates)
  ) return null;
  return record as AttemptRecord;
}

function utf8Bytes(text: string): number {
  return new TextEncoder().encode(text).byteLength;
}
