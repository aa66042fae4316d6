/**
 * The metrics port over prom-client: one registry per gateway instance, with none of
 * prom-client's default process metrics (they read Node's internals and fail on Deno), served as
 * the Prometheus text format at `GET /metrics` on Node and Deno.
 */
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type {
  AttemptSeen,
  CacheResult,
  FetchSeen,
  GaugeSources,
  MetricsPort,
} from "../core/telemetry.ts";
import { DURATION_BUCKETS_SECONDS } from "./duration-buckets.ts";

/** Every metric's name starts with this (http_server_* follow the OpenTelemetry names instead). */
const PREFIX = "tracefetch_";

/**
 * Values of recorded events waiting to reach the registry, at most: past it they are applied at
 * once, so a process whose timers never get a turn still holds no more than this.
 */
export const MAX_PENDING_VALUES = 16_384;

/** The events a request records, tagged in the pending list (each followed by its values). */
const SEARCHED = 0;
const ATTEMPTED = 1;
const LOOKED_UP = 2;
const SERVED = 3;

/**
 * A request's events (a search, its attempts, its cache lookups, the request itself) are pushed
 * onto a list and applied to prom-client's registry on a later turn, after the answer is written,
 * and before every scrape: prom-client validates and hashes each label set as it counts, a few
 * microseconds per event that a search should not wait for (docs/decisions.md, "Metrics and
 * traces").
 */
export class PrometheusMetrics implements MetricsPort {
  readonly scraped = true;
  #pending: unknown[] = [];
  readonly registry = new Registry();
  readonly #searches: Counter<"code">;
  readonly #searchDuration: Histogram<string>;
  readonly #attempts: Counter<"provider" | "outcome" | "code">;
  readonly #attemptDuration: Histogram<"provider" | "outcome">;
  readonly #bytes: Counter<"provider">;
  readonly #cost: Counter<"provider">;
  readonly #cache: Counter<"provider" | "result">;
  readonly #refusals: Counter<"code">;
  readonly #crawls: Counter<"ended">;
  readonly #crawlPages: Counter<string>;
  readonly #fetches: Counter<"outcome" | "code">;
  readonly #fetchDuration: Histogram<"outcome">;
  readonly #fetchBytes: Counter<string>;
  readonly #verifies: Counter<"verdict">;
  readonly #requests: Histogram<"http_route" | "http_request_method" | "http_response_status_code">;
  #sources: GaugeSources | null = null;

  constructor() {
    const registers = [this.registry];
    const buckets = DURATION_BUCKETS_SECONDS;
    this.#searches = new Counter({
      name: `${PREFIX}searches_total`,
      help: "Searches answered, by the envelope's code (refusals at admission included).",
      labelNames: ["code"],
      registers,
    });
    this.#searchDuration = new Histogram({
      name: `${PREFIX}search_duration_seconds`,
      help: "Time from admission to the answer of a search.",
      buckets,
      registers,
    });
    this.#attempts = new Counter({
      name: `${PREFIX}provider_attempts_total`,
      help: "Provider attempts, by provider, outcome and code (cached answers included).",
      labelNames: ["provider", "outcome", "code"],
      registers,
    });
    this.#attemptDuration = new Histogram({
      name: `${PREFIX}provider_attempt_duration_seconds`,
      help: "Duration of a provider attempt, queueing for the provider included.",
      labelNames: ["provider", "outcome"],
      buckets,
      registers,
    });
    this.#bytes = new Counter({
      name: `${PREFIX}provider_bytes_read_total`,
      help: "Decoded bytes read from each provider.",
      labelNames: ["provider"],
      registers,
    });
    this.#cost = new Counter({
      name: `${PREFIX}provider_cost_micros_total`,
      help: "What providers' attempts cost, in millionths of the manifest's currency unit.",
      labelNames: ["provider"],
      registers,
    });
    this.#cache = new Counter({
      name: `${PREFIX}cache_lookups_total`,
      help: "Answer cache lookups: hit, miss, or bypass (the answer may not be cached).",
      labelNames: ["provider", "result"],
      registers,
    });
    this.#refusals = new Counter({
      name: `${PREFIX}caller_refusals_total`,
      help: "Requests refused for their caller: token, scope or caller limits, by code.",
      labelNames: ["code"],
      registers,
    });
    this.#crawls = new Counter({
      name: `${PREFIX}crawls_total`,
      help: "Crawls that ran, by how they ended (cancelled: the caller left).",
      labelNames: ["ended"],
      registers,
    });
    this.#crawlPages = new Counter({
      name: `${PREFIX}crawl_pages_total`,
      help: "Pages crawls answered as page events.",
      registers,
    });
    this.#fetches = new Counter({
      name: `${PREFIX}fetches_total`,
      help:
        "Page fetches answered: fetched, cached, refused (policy, robots.txt) or failed, by code.",
      labelNames: ["outcome", "code"],
      registers,
    });
    this.#fetchDuration = new Histogram({
      name: `${PREFIX}fetch_duration_seconds`,
      help: "Time from a fetch's admission to its answer, by outcome.",
      labelNames: ["outcome"],
      buckets,
      registers,
    });
    this.#fetchBytes = new Counter({
      name: `${PREFIX}fetch_bytes_read_total`,
      help: "Decoded bytes read from fetched pages.",
      registers,
    });
    this.#verifies = new Counter({
      name: `${PREFIX}verifies_total`,
      help: "Verifies answered, by verdict.",
      labelNames: ["verdict"],
      registers,
    });
    this.#requests = new Histogram({
      name: "http_server_request_duration_seconds",
      help: "Duration of HTTP server requests, by route pattern, method and status.",
      labelNames: ["http_route", "http_request_method", "http_response_status_code"],
      buckets,
      registers,
    });
    const sources = () => this.#sources;
    new Gauge({
      name: `${PREFIX}searches_in_flight`,
      help: "Searches admitted and not yet answered.",
      registers,
      collect() {
        this.set(sources()?.searchesInFlight() ?? 0);
      },
    });
    new Counter({
      name: `${PREFIX}shared_state_fallbacks_total`,
      help: "Times the shared state fell back to this instance's memory.",
      registers,
      // The state counts its own fallbacks; the counter shows its count at each collection.
      collect() {
        this.reset();
        this.inc(sources()?.sharedStateFallbacks() ?? 0);
      },
    });
    new Gauge({
      name: `${PREFIX}provider_suspended`,
      help: "1 while a provider is suspended after failing, else 0.",
      labelNames: ["provider"],
      registers,
      async collect() {
        const states = await sources()?.suspended();
        for (const [provider, suspended] of states ?? []) {
          this.set({ provider }, suspended ? 1 : 0);
        }
      },
    });
  }

  #push(...values: unknown[]): void {
    const pending = this.#pending;
    if (pending.length === 0) setTimeout(() => this.#apply(), 0);
    pending.push(...values);
    if (pending.length >= MAX_PENDING_VALUES) this.#apply();
  }

  /** Counts every pending event in the registry. */
  #apply(): void {
    const pending = this.#pending;
    this.#pending = [];
    for (let i = 0; i < pending.length;) {
      const tag = pending[i++] as number;
      switch (tag) {
        case SEARCHED: {
          this.#searches.inc({ code: pending[i++] as string });
          this.#searchDuration.observe(pending[i++] as number);
          break;
        }
        case ATTEMPTED: {
          const { provider, outcome, code, latencyMs, cached, bytes, costMicros } =
            pending[i++] as AttemptSeen;
          this.#attempts.inc({ provider, outcome, code });
          this.#attemptDuration.observe({ provider, outcome }, latencyMs / 1000);
          if (cached) break;
          this.#bytes.inc({ provider }, bytes);
          this.#cost.inc({ provider }, costMicros);
          break;
        }
        case LOOKED_UP: {
          const provider = pending[i++] as string;
          this.#cache.inc({ provider, result: pending[i++] as CacheResult });
          break;
        }
        case SERVED: {
          const [route, method, status, seconds] = pending.slice(i, i += 4) as [
            string,
            string,
            number,
            number,
          ];
          this.#requests.observe({
            http_route: route,
            http_request_method: method,
            http_response_status_code: String(status),
          }, seconds);
          break;
        }
        default:
          throw new Error(`unknown pending metric event ${tag}`);
      }
    }
  }

  searched(code: string, seconds: number): void {
    this.#push(SEARCHED, code, seconds);
  }

  attempted(seen: AttemptSeen): void {
    this.#push(ATTEMPTED, seen);
  }

  cacheLookup(provider: string, result: CacheResult): void {
    this.#push(LOOKED_UP, provider, result);
  }

  refused(code: string): void {
    this.#refusals.inc({ code });
  }

  crawled(ended: string, pages: number): void {
    this.#crawls.inc({ ended });
    this.#crawlPages.inc(pages);
  }

  fetched(seen: FetchSeen): void {
    const { outcome, code } = seen;
    this.#fetches.inc({ outcome, code });
    this.#fetchDuration.observe({ outcome }, seen.seconds);
    if (seen.bytes > 0) this.#fetchBytes.inc(seen.bytes);
  }

  verified(verdict: string): void {
    this.#verifies.inc({ verdict });
  }

  served(route: string, method: string, status: number, seconds: number): void {
    this.#push(SERVED, route, method, status, seconds);
  }

  watch(sources: GaugeSources): void {
    this.#sources = sources;
  }

  async exposition(): Promise<{ contentType: string; text: string }> {
    this.#apply();
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }
}
