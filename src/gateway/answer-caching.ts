/**
 * The answer cache as one gateway instance holds it (docs/envelope.md, "Cached answers"): the
 * runtime's cache (Redis, Durable Objects) or one in this instance's memory, and the code that
 * decides what a search keeps (answer-cache-hook.ts), loaded only when a manifest entry declares
 * `cache_ttl_seconds`.
 */
import type { AnswerCacheHook } from "../core/cached-attempt.ts";
import type { ProviderSpec } from "../protocol/manifest-schema.ts";
import type { StartFlight } from "./flight.ts";
import type { AnswerCache } from "../state/answer-cache.ts";
import type { PlacedAnswers } from "./answer-places.ts";
import type { ResolvedConfig } from "../config/gateway-config.ts";
import type { SearchAsk } from "./search-run.ts";
import { lazy } from "../core/lazy-module.ts";

type HookModule = typeof import("./answer-cache-hook.ts");

const hookModule = lazy(() => import("./answer-cache-hook.ts"));

export class AnswerCaching {
  readonly #config: ResolvedConfig;
  /** Whether any provider's answers are cached at all. */
  readonly #enabled: boolean;
  #module: HookModule | null = null;
  /** The runtime's store (Redis, Durable Objects), or null: this instance's memory. */
  readonly #store: AnswerCache | null;
  #cache: PlacedAnswers | null = null;

  constructor(config: ResolvedConfig) {
    this.#config = config;
    this.#enabled = config.manifest.providers.some((p) => (p.cache_ttl_seconds ?? 0) > 0);
    this.#store = config.answerCache;
  }

  /** Null once a search may use the cache (or nothing is cached); else when it may. */
  ready(): Promise<void> | null {
    if (!this.#enabled || this.#module !== null) return null;
    return hookModule().then((loaded) => {
      this.#module = loaded;
    });
  }

  /**
   * One search's view of the cache; undefined when nothing is cached. `budgetMs`: what is left of
   * the search's budget, which bounds each lookup in a store.
   */
  hookFor(
    ask: SearchAsk,
    later: (work: () => Promise<void>) => void,
    budgetMs?: () => number,
  ): AnswerCacheHook | undefined {
    const loaded = this.#module;
    if (loaded === null) return undefined;
    const { now, cache: variables } = this.#config;
    this.#cache ??= new loaded.PlacedAnswers(
      this.#store ?? new loaded.MemoryAnswerCache(variables.maxBytes, now),
      variables.maxBytes,
      now,
    );
    const { request, caller } = ask;
    return loaded.answerCacheHook({ cache: this.#cache, request, caller, now, later, budgetMs });
  }

  /**
   * A refresh of `provider`: every answer of it cached before is dropped, on every instance. False
   * when the store could not be told: its answers may be served until their TTL.
   */
  async invalidate(provider: string): Promise<boolean> {
    if (this.#store === null) {
      // In memory only once a search loaded the cache: before, there is nothing to drop.
      return await this.#cache?.invalidate(provider) ?? true;
    }
    return await this.#store.invalidate(provider).catch(() => false);
  }
}

/**
 * A shared flight that runs only once the cache said it cannot answer the whole search: one the
 * cache answers runs here alone, and lets go of the flight claimed beside the lookups
 * (docs/decisions.md, "One round trip before the providers").
 */
export function unlessCached(
  cache: AnswerCacheHook | undefined,
  run: readonly ProviderSpec[],
  shared: StartFlight,
  local: StartFlight,
  /** Lets go of a flight claimed beforehand, when the cache answered. */
  answered: () => void,
): StartFlight {
  const all = cache?.answersAll?.(run) ?? null;
  if (all === null) return shared;
  return (signal, onAttempt) => {
    const source = all.then((hit) => {
      if (!hit) return shared(signal, onAttempt);
      answered();
      return local(signal, onAttempt);
    });
    return { joined: source.then((s) => s.joined), result: source.then((s) => s.result) };
  };
}
