/**
 * What a gateway instance keeps for page fetches (docs/envelope.md, "Fetching a page"): their
 * admission, which shares the in-flight slots and the caller limits of searches, the pages in the
 * answer cache, and the check of a receipt against this gateway's own keys. The fetch itself is
 * src/evidence's; the HTTP route puts the two together.
 */
import type { Envelope } from "../protocol/envelope-schema.ts";
import type { VerifyAsk } from "../protocol/fetch-request.ts";
import type { Anchor, VerifyResult } from "../protocol/evidence-schema.ts";
import { DEFAULT_FETCH_CACHE_TTL_SECONDS } from "../protocol/evidence-route-limits.ts";
import type { CallerAsk } from "./caller-limits.ts";
import type { ResolvedConfig } from "./gateway-config.ts";
import { FetchCache } from "./fetch-cache.ts";
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
   * Admits a fetch as a search is admitted: refused with 429 `overloaded` when every slot is held
   * (before the caller's limit counts it), then counted against the caller's limits as a search
   * costing nothing, then given one of the in-flight slots searches take.
   */
  async admit(ask: CallerAsk): Promise<FetchAdmission> {
    if (this.searches.taken >= this.searches.limit) {
      return { ok: false, envelope: fetchOverloaded(ask.requestId) };
    }
    if (this.config.manifest.caller_limits !== undefined) {
      const { countSearch } = await import("./caller-limits.ts");
      const limited = await countSearch(this.config, ask, "fetch", []);
      if (limited !== null) return { ok: false, envelope: limited };
    }
    const release = this.searches.tryTake();
    if (release === null) return { ok: false, envelope: fetchOverloaded(ask.requestId) };
    return { ok: true, release };
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

  /**
   * `POST /v1/verify`: a receipt checked against this gateway's own keys and issuer, the text
   * against it, and the quote in the text; `anchorsOf` gives the text's headings.
   */
  async verify(
    ask: VerifyAsk,
    anchorsOf: (markdown: string) => Promise<readonly Anchor[]>,
  ): Promise<VerifyResult> {
    const { signer, gatewayIssuer } = this.config.auth;
    const { verifyEvidence } = await import("./verify-evidence.ts");
    return await verifyEvidence(
      ask,
      signer === null ? null : { jwks: signer.publicJwks, issuer: gatewayIssuer },
      anchorsOf,
    );
  }
}

function fetchOverloaded(requestId: string): Envelope {
  const what = "the gateway is at its limit of searches in flight";
  return { ...overloaded(requestId, what), command: "fetch" };
}
