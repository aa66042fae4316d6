/**
 * What each provider said it is (docs/protocol.md, "describe"), asked in the background so no
 * start or search ever waits for it. A success is kept for DESCRIBE_TTL_MS; a failure is not kept
 * and is asked again after DESCRIBE_RETRY_MS. A provider that answers anything but a valid describe
 * is a search-only v1 provider, as is one not asked yet. With a shared store, one instance asks
 * (it holds the store's lease) and the others read its answer there.
 */
import type { ProviderSpec } from "../protocol/manifest-schema.ts";
import { DESCRIBE_RETRY_MS, DESCRIBE_TIMEOUT_MS, DESCRIBE_TTL_MS } from "../protocol/limits.ts";
import { SHARED_PROBE_RECHECK_MS } from "../protocol/state-limits.ts";
import { type OptionalAction, PROTOCOL_VERSIONS } from "../protocol/provider-actions.ts";
import { FILTER_NAMES, type FilterName } from "../protocol/search-filters.ts";
import type { Description, ProviderClient } from "../transport/provider-client.ts";
import type { SharedState } from "../state/shared-state.ts";

type Entry = {
  /** The last valid describe answer, or null: search-only v1. */
  description: Description | null;
  /** Whether the provider ever answered describe definitely (an answer, or a refusal of it). */
  answered: boolean;
  /** When to ask again (by the injected clock). */
  askAt: number;
};

export class Descriptions {
  readonly #entries = new Map<string, Entry>();
  /** Describes in flight, with when each started. */
  readonly #asking = new Map<string, { done: Promise<void>; at: number }>();

  constructor(
    private readonly now: () => number,
    private readonly clientFor: (spec: ProviderSpec) => ProviderClient,
    private readonly state: SharedState,
  ) {}

  /**
   * Starts a describe of this provider unless one is in flight or its last answer is still fresh.
   * Never awaited by a search; `headers` are the call's (a token for a gateway-token provider).
   */
  ask(spec: ProviderSpec, headers: () => Promise<Record<string, string>>): void {
    // A runtime may drop work left after a response (Workers do): an ask that outlived its
    // timeout twice over never settled, so it no longer blocks the next one.
    const pending = this.#asking.get(spec.name);
    if (pending !== undefined && this.now() - pending.at < 2 * DESCRIBE_TIMEOUT_MS) return;
    const entry = this.#entries.get(spec.name);
    if (entry !== undefined && this.now() < entry.askAt) return;
    const asking = this.#describe(spec, headers, entry ?? null)
      .catch((error) => {
        // A fault here must not end the process; the provider stays as it was and is asked again.
        console.error(`describe of provider "${spec.name}" failed:`, error);
        this.#entries.set(spec.name, {
          description: entry?.description ?? null,
          answered: entry?.answered ?? false,
          askAt: this.now() + DESCRIBE_RETRY_MS,
        });
      })
      .finally(() => {
        if (this.#asking.get(spec.name)?.done === asking) this.#asking.delete(spec.name);
      });
    this.#asking.set(spec.name, { done: asking, at: this.now() });
  }

  /** The filters a provider declared, among those the gateway knows. */
  filtersOf(spec: ProviderSpec): FilterName[] {
    const declared = this.#entries.get(spec.name)?.description?.filters ?? [];
    return FILTER_NAMES.filter((name) => declared.includes(name));
  }

  /**
   * Whether a provider's describe lists an action: false for a search-only provider (one that
   * refused describe or answered it with anything but a valid answer); undefined until it did.
   */
  declares(spec: ProviderSpec, action: OptionalAction): boolean | undefined {
    const entry = this.#entries.get(spec.name);
    if (entry === undefined || !entry.answered) return undefined;
    return entry.description?.actions.includes(action) ?? false;
  }

  /** Why a provider cannot be spoken to (no common protocol major), or null when it can. */
  versionProblem(spec: ProviderSpec): string | null {
    const theirs = this.#entries.get(spec.name)?.description?.protocol_versions;
    if (theirs === undefined || theirs.some((major) => PROTOCOL_VERSIONS.includes(major))) {
      return null;
    }
    return `provider "${spec.name}" speaks protocol ${majors(theirs)}; this gateway speaks ${
      majors(PROTOCOL_VERSIONS)
    }`;
  }

  async #describe(
    spec: ProviderSpec,
    headers: () => Promise<Record<string, string>>,
    previous: Entry | null,
  ): Promise<void> {
    const retry = () =>
      this.#entries.set(spec.name, {
        description: previous?.description ?? null,
        answered: previous?.answered ?? false,
        askAt: this.now() + DESCRIBE_RETRY_MS,
      });
    const keep = (description: Description | null, askIn: number) =>
      this.#entries.set(spec.name, { description, answered: true, askAt: this.now() + askIn });
    // Another instance may have asked already: its answer serves this one too.
    const stored = await this.state.probeResult("describe", spec.name, DESCRIBE_TTL_MS);
    const shared = stored === null ? undefined : describedAs(stored.value);
    if (shared !== undefined) return void keep(shared, DESCRIBE_TTL_MS);
    if (!await this.state.leaseProbe("describe", spec.name, DESCRIBE_TIMEOUT_MS)) {
      // Another instance is asking now: its answer is in the store by the next look.
      this.#entries.set(spec.name, {
        description: previous?.description ?? null,
        answered: previous?.answered ?? false,
        askAt: this.now() + SHARED_PROBE_RECHECK_MS,
      });
      return;
    }
    let callHeaders: Record<string, string>;
    try {
      callHeaders = await headers();
    } catch {
      // No token could be minted now: a failure like any other, asked again later.
      retry();
      return;
    }
    const result = await this.clientFor(spec).describe({
      signal: AbortSignal.timeout(DESCRIBE_TIMEOUT_MS),
      headers: callHeaders,
    });
    switch (result.kind) {
      case "answer":
      case "unsupported":
      case "invalid": {
        // Anything but a valid answer is definite too: a provider written before describe existed.
        const description = result.kind === "answer" ? result.answer : null;
        keep(description, DESCRIBE_TTL_MS);
        await this.state.storeProbeResult("describe", spec.name, { description }, DESCRIBE_TTL_MS);
        return;
      }
      default:
        retry();
    }
  }
}

/**
 * A describe answer another instance stored (null: search-only), or undefined when the value is
 * not one this gateway stores.
 */
function describedAs(value: unknown): Description | null | undefined {
  if (typeof value !== "object" || value === null || !("description" in value)) return undefined;
  const { description } = value as { description: unknown };
  if (description === null) return null;
  const d = description as Partial<Description>;
  const listed = Array.isArray(d.actions) && Array.isArray(d.filters) &&
    Array.isArray(d.protocol_versions);
  return listed && typeof d.provider === "string" && typeof d.scope === "string"
    ? description as Description
    : undefined;
}

function majors(list: readonly number[]): string {
  return list.length === 0 ? "no major" : `major ${list.join(", ")}`;
}
