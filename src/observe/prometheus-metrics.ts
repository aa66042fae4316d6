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

export class PrometheusMetrics implements MetricsPort {
  readonly scraped = true;
  readonly registry = new Registry();
  readonly #searches: Counter<"code">;
  readonly #searchDuration: Histogram<string>;
  readonly #attempts: Counter<"provider" | "outcome" | "code">;
  readonly #attemptDuration: Histogram<"provider" | "outcome">;
  readonly #bytes: Counter<"provider">;
  readonly #cost: Counter<"provider">;
  readonly #cache: Counter<"provider" | "result">;
  readonly #refusals: Counter<"code">;
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

  searched(code: string, seconds: number): void {
    this.#searches.inc({ code });
    this.#searchDuration.observe(seconds);
  }

  attempted(seen: AttemptSeen): void {
    const { provider, outcome, code } = seen;
    this.#attempts.inc({ provider, outcome, code });
    this.#attemptDuration.observe({ provider, outcome }, seen.latencyMs / 1000);
    if (seen.cached) return;
    this.#bytes.inc({ provider }, seen.bytes);
    this.#cost.inc({ provider }, seen.costMicros);
  }

  cacheLookup(provider: string, result: CacheResult): void {
    this.#cache.inc({ provider, result });
  }

  refused(code: string): void {
    this.#refusals.inc({ code });
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
    this.#requests.observe({
      http_route: route,
      http_request_method: method,
      http_response_status_code: String(status),
    }, seconds);
  }

  watch(sources: GaugeSources): void {
    this.#sources = sources;
  }

  async exposition(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }
}
