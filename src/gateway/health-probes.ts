/**
 * Provider health for `/v1/doctor` and `/v1/status` (docs/envelope.md, "Other routes"): each
 * provider probed at most once per HEALTH_TTL_MS, with one probe in flight per provider however
 * many callers ask. A probe that fails reads `unavailable` with `coverage: unknown`, never
 * healthy; a provider that does not implement health reads `unknown`. With a shared store the
 * once-per-TTL holds across instances: one probes (it holds the store's lease), the others read its
 * answer there, or probe themselves if none comes within the probe's timeout.
 */
import type { ProviderHealth } from "../protocol/envelope-schema.ts";
import type { ProviderSpec } from "../protocol/manifest-schema.ts";
import { HEALTH_TIMEOUT_MS, HEALTH_TTL_MS } from "../protocol/limits.ts";
import { SHARED_PROBE_RECHECK_MS } from "../protocol/state-limits.ts";
import type { ProviderClient } from "../transport/provider-client.ts";
import { AttemptAbort } from "../transport/attempt-abort.ts";
import type { SharedState } from "../state/shared-state.ts";

type Probed = { health: ProviderHealth; at: number };

export class HealthProbes {
  readonly #last = new Map<string, Probed>();
  readonly #inFlight = new Map<string, Promise<ProviderHealth>>();

  constructor(
    /** The gateway's monotonic clock, for the TTL. */
    private readonly now: () => number,
    /** The wall clock, for `checked_at`. */
    private readonly wallClock: () => number,
    private readonly clientFor: (spec: ProviderSpec) => ProviderClient,
    /** Whether the provider's describe lists `health`; undefined when not known. */
    private readonly declaresHealth: (spec: ProviderSpec) => boolean | undefined,
    private readonly state: SharedState,
  ) {}

  /** The last probe's answer, without probing (`/v1/status`). */
  cached(name: string): ProviderHealth | undefined {
    return this.#last.get(name)?.health;
  }

  /** A fresh answer: the cached one within its TTL, else the probe in flight or a new one. */
  probe(
    spec: ProviderSpec,
    headers: () => Promise<Record<string, string>>,
  ): Promise<ProviderHealth> {
    const last = this.#last.get(spec.name);
    if (last !== undefined && this.now() - last.at < HEALTH_TTL_MS) {
      return Promise.resolve(last.health);
    }
    let running = this.#inFlight.get(spec.name);
    if (running === undefined) {
      running = this.#run(spec, headers).finally(() => this.#inFlight.delete(spec.name));
      this.#inFlight.set(spec.name, running);
    }
    return running;
  }

  /** Keeps a health answer got another way (a refresh) as the provider's last probe. */
  record(name: string, answer: Omit<ProviderHealth, "checked_at">): ProviderHealth {
    const health = { ...answer, checked_at: new Date(this.wallClock()).toISOString() };
    // A refresh's answer: its route answers at once, the store's copy follows in the background.
    void this.#keep(name, health);
    return health;
  }

  /**
   * Keeps an answer here, and in the store for the other instances; the promise settles once the
   * store has it (a guarded store never rejects). A probe's caller waits for it: on Workers a write
   * still in flight when the answer leaves is cancelled with the request.
   */
  async #keep(name: string, health: ProviderHealth): Promise<void> {
    this.#last.set(name, { health, at: this.now() });
    await this.state.storeProbeResult("health", name, health, HEALTH_TTL_MS);
  }

  /** Another instance's answer within its TTL, or null. */
  async #shared(name: string): Promise<ProviderHealth | null> {
    const stored = await this.state.probeResult("health", name, HEALTH_TTL_MS);
    if (stored === null || !isHealth(stored.value)) return null;
    this.#last.set(name, { health: stored.value, at: this.now() });
    return stored.value;
  }

  async #run(
    spec: ProviderSpec,
    headers: () => Promise<Record<string, string>>,
  ): Promise<ProviderHealth> {
    const shared = await this.#shared(spec.name);
    if (shared !== null) return shared;
    if (!await this.state.leaseProbe("health", spec.name, HEALTH_TIMEOUT_MS)) {
      // Another instance probes it now: its answer, unless none is stored within the timeout.
      for (let waited = 0; waited < HEALTH_TIMEOUT_MS; waited += SHARED_PROBE_RECHECK_MS) {
        await new Promise((resolve) => setTimeout(resolve, SHARED_PROBE_RECHECK_MS));
        const theirs = await this.#shared(spec.name);
        if (theirs !== null) return theirs;
      }
    }
    return await this.#probe(spec, headers);
  }

  async #probe(
    spec: ProviderSpec,
    headers: () => Promise<Record<string, string>>,
  ): Promise<ProviderHealth> {
    const failed = (message: string): ProviderHealth =>
      this.#health({ status: "unavailable", coverage: "unknown", diagnostics: [message] });
    let health: ProviderHealth;
    // The probe's own deadline, as an AttemptAbort the transport reads as a timeout: a bare
    // AbortSignal.timeout carries a reason the transport takes for a caller who went away.
    const deadline = new AbortController();
    const timer = setTimeout(
      () => deadline.abort(new AttemptAbort("timeout", "provider_timeout")),
      HEALTH_TIMEOUT_MS,
    );
    try {
      const result = await this.clientFor(spec).health({
        signal: deadline.signal,
        headers: await headers(),
        declared: this.declaresHealth(spec),
      });
      switch (result.kind) {
        case "answer": {
          const { status, coverage, watermark, document_count, diagnostics } = result.answer;
          health = this.#health({ status, coverage, watermark, diagnostics });
          if (document_count !== undefined) health.document_count = document_count;
          break;
        }
        case "unsupported":
          health = this.#health({ status: "unknown", coverage: "unknown", diagnostics: [] });
          break;
        default:
          health = failed(
            result.outcome === "timeout"
              ? `the health probe got no answer within ${HEALTH_TIMEOUT_MS} ms`
              : result.message,
          );
      }
    } catch {
      health = failed("the health probe could not be made");
    } finally {
      clearTimeout(timer);
    }
    await this.#keep(spec.name, health);
    return health;
  }

  #health(
    parts: Pick<ProviderHealth, "status" | "coverage" | "diagnostics"> & {
      watermark?: string | null;
    },
  ): ProviderHealth {
    return {
      status: parts.status,
      coverage: parts.coverage,
      watermark: parts.watermark ?? null,
      diagnostics: parts.diagnostics,
      checked_at: new Date(this.wallClock()).toISOString(),
    };
  }
}

/** A health answer as this gateway stores it; anything else is not taken from the store. */
function isHealth(value: unknown): value is ProviderHealth {
  if (typeof value !== "object" || value === null) return false;
  const h = value as Partial<ProviderHealth>;
  return typeof h.status === "string" && typeof h.coverage === "string" &&
    Array.isArray(h.diagnostics) && typeof h.checked_at === "string";
}
