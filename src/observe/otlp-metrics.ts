/**
 * The metrics port on Workers (docs/deploy.md, "Observing it"): no one scrapes an isolate, so the
 * same metrics are kept in the isolate's memory and pushed over OTLP/HTTP (JSON) to `/v1/metrics`,
 * cumulative since the isolate started, at most once per PUSH_EVERY_MS, inside a request's
 * waitUntil. Each isolate is its own instance (`service.instance.id`), as each Node process is.
 */
import { ATTR_SERVICE_NAME } from "@opentelemetry/semantic-conventions";
import type {
  AttemptSeen,
  CacheResult,
  FetchSeen,
  GaugeSources,
  MetricsPort,
} from "../core/telemetry.ts";
import { DURATION_BUCKETS_SECONDS } from "./duration-buckets.ts";
import { EXPORT_TIMEOUT_MS } from "./otel-tracing.ts";

/** A push per request would double a Worker's subrequests; a collector needs no more than this. */
export const PUSH_EVERY_MS = 10_000;

type Labels = Record<string, string>;
type Sum = { name: string; labels: Labels; value: number };
type Histogram = { name: string; labels: Labels; counts: number[]; sum: number; count: number };

const attributes = (labels: Labels) =>
  Object.entries(labels).map(([key, value]) => ({ key, value: { stringValue: value } }));

export class OtlpMetrics implements MetricsPort {
  readonly scraped = false;
  readonly #sums = new Map<string, Sum>();
  readonly #histograms = new Map<string, Histogram>();
  readonly #started = Date.now();
  readonly #instance = crypto.randomUUID();
  #sources: GaugeSources | null = null;
  #pushedAt = -Infinity;

  constructor(
    readonly endpoint: string,
    readonly headers: Record<string, string>,
    readonly serviceName: string,
  ) {}

  #add(name: string, labels: Labels, by = 1): void {
    const key = `${name}${JSON.stringify(labels)}`;
    const sum = this.#sums.get(key) ?? { name, labels, value: 0 };
    sum.value += by;
    this.#sums.set(key, sum);
  }

  #observe(name: string, labels: Labels, seconds: number): void {
    const key = `${name}${JSON.stringify(labels)}`;
    const histogram = this.#histograms.get(key) ??
      { name, labels, counts: DURATION_BUCKETS_SECONDS.map(() => 0).concat(0), sum: 0, count: 0 };
    const at = DURATION_BUCKETS_SECONDS.findIndex((bound) => seconds <= bound);
    histogram.counts[at < 0 ? DURATION_BUCKETS_SECONDS.length : at]! += 1;
    histogram.sum += seconds;
    histogram.count += 1;
    this.#histograms.set(key, histogram);
  }

  searched(code: string, seconds: number): void {
    this.#add("tracefetch_searches_total", { code });
    this.#observe("tracefetch_search_duration_seconds", {}, seconds);
  }

  attempted(seen: AttemptSeen): void {
    const { provider, outcome, code } = seen;
    this.#add("tracefetch_provider_attempts_total", { provider, outcome, code });
    this.#observe(
      "tracefetch_provider_attempt_duration_seconds",
      { provider, outcome },
      seen.latencyMs / 1000,
    );
    if (seen.cached) return;
    this.#add("tracefetch_provider_bytes_read_total", { provider }, seen.bytes);
    this.#add("tracefetch_provider_cost_micros_total", { provider }, seen.costMicros);
  }

  cacheLookup(provider: string, result: CacheResult): void {
    this.#add("tracefetch_cache_lookups_total", { provider, result });
  }

  refused(code: string): void {
    this.#add("tracefetch_caller_refusals_total", { code });
  }

  crawled(ended: string, pages: number): void {
    this.#add("tracefetch_crawls_total", { ended });
    this.#add("tracefetch_crawl_pages_total", {}, pages);
  }

  fetched(seen: FetchSeen): void {
    const { outcome, code } = seen;
    this.#add("tracefetch_fetches_total", { outcome, code });
    this.#observe("tracefetch_fetch_duration_seconds", { outcome }, seen.seconds);
    if (seen.bytes > 0) this.#add("tracefetch_fetch_bytes_read_total", {}, seen.bytes);
  }

  verified(verdict: string): void {
    this.#add("tracefetch_verifies_total", { verdict });
  }

  served(route: string, method: string, status: number, seconds: number): void {
    this.#observe("http_server_request_duration_seconds", {
      http_route: route,
      http_request_method: method,
      http_response_status_code: String(status),
    }, seconds);
  }

  watch(sources: GaugeSources): void {
    this.#sources = sources;
  }

  /** Not served on Workers (`/metrics` answers 404 there); the same names go out over OTLP. */
  exposition(): Promise<{ contentType: string; text: string }> {
    return Promise.resolve({ contentType: "text/plain", text: "" });
  }

  /** Pushes every metric when the last push is PUSH_EVERY_MS old; never rejects. */
  async push(now = Date.now()): Promise<void> {
    if (now - this.#pushedAt < PUSH_EVERY_MS) return;
    this.#pushedAt = now;
    try {
      const response = await fetch(this.endpoint, {
        method: "POST",
        headers: { ...this.headers, "content-type": "application/json" },
        body: await this.body(now),
        signal: AbortSignal.timeout(EXPORT_TIMEOUT_MS),
      });
      await response.body?.cancel();
    } catch {
      // A collector that is down costs this push; the next one carries the same cumulative sums.
    }
  }

  /** The OTLP JSON `ExportMetricsServiceRequest` of every metric now. */
  async body(now: number): Promise<string> {
    const start = `${this.#started}000000`;
    const time = `${now}000000`;
    const point = (labels: Labels) => ({
      attributes: attributes(labels),
      startTimeUnixNano: start,
      timeUnixNano: time,
    });
    const byName = new Map<string, Record<string, unknown>>();
    for (const sum of this.#sums.values()) {
      const metric = byName.get(sum.name) ??
        { name: sum.name, sum: { aggregationTemporality: 2, isMonotonic: true, dataPoints: [] } };
      (metric.sum as { dataPoints: unknown[] }).dataPoints.push({
        ...point(sum.labels),
        asDouble: sum.value,
      });
      byName.set(sum.name, metric);
    }
    for (const h of this.#histograms.values()) {
      const metric = byName.get(h.name) ??
        { name: h.name, unit: "s", histogram: { aggregationTemporality: 2, dataPoints: [] } };
      (metric.histogram as { dataPoints: unknown[] }).dataPoints.push({
        ...point(h.labels),
        count: String(h.count),
        sum: h.sum,
        bucketCounts: h.counts.map(String),
        explicitBounds: DURATION_BUCKETS_SECONDS,
      });
      byName.set(h.name, metric);
    }
    const gauges: Array<Record<string, unknown>> = [];
    const sources = this.#sources;
    if (sources !== null) {
      const gauge = (name: string, points: Array<[Labels, number]>) =>
        gauges.push({
          name,
          gauge: {
            dataPoints: points.map(([labels, value]) => ({ ...point(labels), asDouble: value })),
          },
        });
      gauge("tracefetch_searches_in_flight", [[{}, sources.searchesInFlight()]]);
      const suspended = await sources.suspended().catch(() => new Map<string, boolean>());
      gauge(
        "tracefetch_provider_suspended",
        [...suspended].map(([provider, s]) => [{ provider }, s ? 1 : 0]),
      );
      byName.set("tracefetch_shared_state_fallbacks_total", {
        name: "tracefetch_shared_state_fallbacks_total",
        sum: {
          aggregationTemporality: 2,
          isMonotonic: true,
          dataPoints: [{ ...point({}), asDouble: sources.sharedStateFallbacks() }],
        },
      });
    }
    return JSON.stringify({
      resourceMetrics: [{
        resource: {
          attributes: attributes({
            [ATTR_SERVICE_NAME]: this.serviceName,
            "service.instance.id": this.#instance,
          }),
        },
        scopeMetrics: [{
          scope: { name: "tracefetch-edge" },
          metrics: [...byName.values(), ...gauges],
        }],
      }],
    });
  }
}
