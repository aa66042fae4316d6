/**
 * What a gateway instance keeps for page fetches (docs/envelope.md, "Fetching a page"): their
 * admission, which shares the in-flight slots and the caller limits of searches, and the pages in
 * the answer cache. The fetch and the check of a receipt are src/evidence's; the HTTP route puts
 * the two together.
 */
import type { Envelope } from "../protocol/envelope-schema.ts";
import { DEFAULT_FETCH_CACHE_TTL_SECONDS } from "../protocol/evidence-route-limits.ts";
import type { CallerAsk } from "./caller-limits.ts";
import type { ResolvedConfig } from "../config/gateway-config.ts";
import { FetchCache } from "./fetch-cache.ts";
import { countedThen } from "./admission.ts";
import { overloaded } from "./search-run.ts";
import type { Slots } from "./slots.ts";

/** A fetch admitted: its slot, to give back once the answer was delivered; or the refusal. */
export type FetchAdmission =
  | { ok: true; release: () => void }
  | { ok: false; envelope: Envelope };

export class PageFetching {
  #pages: FetchCache | null = null;

  constructor(readonly config: ResolvedConfig, private readonly searches: Slots) {}

  /**
   * Admits a fetch as a search is admitted: it takes one of the in-flight slots searches take (429
   * `overloaded` when every one is held, never counted against its caller), then is counted
   * against its caller's limits as a search costing nothing (countedThen); refused there, it gives
   * the slot back.
   *
   * Its place is a slot alone, not placeFor's (admission.ts) join-or-slot: joining needs a Flight,
   * a search's fan-out with its decision and attempts, and a page fetch has none; an identical
   * fetch in flight is fetched again, and repeats after the first answer come from the cache.
   */
  async admit(ask: CallerAsk): Promise<FetchAdmission> {
    const release = this.searches.tryTake();
    if (release === null) return { ok: false, envelope: fetchOverloaded(ask.requestId) };
    const admitted: FetchAdmission = { ok: true, release };
    return await countedThen(this.config, ask, [], release, () => admitted, { command: "fetch" });
  }

  /** Fetched pages in the answer cache: shared only when the fetch policy opens no private range. */
  get pages(): FetchCache {
    const { answerCache, cache, now, manifest } = this.config;
    return this.#pages ??= new FetchCache({
      cache: answerCache,
      maxBytes: cache.maxBytes,
      now,
      ttlMs: DEFAULT_FETCH_CACHE_TTL_SECONDS * 1000,
      shared: (manifest.fetch?.allow_private_cidrs.length ?? 0) === 0,
    });
  }
}

function fetchOverloaded(requestId: string): Envelope {
  const what = "the gateway is at its limit of searches in flight";
  return { ...overloaded(requestId, what), command: "fetch" };
}
