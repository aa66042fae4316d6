/**
 * What one gateway instance keeps between requests: a client and a concurrency gate per provider,
 * and the searches in flight, which only `admit` counts and identical ones share.
 */
import type { SkipReason } from "../protocol/codes.ts";
import type { Envelope } from "../protocol/envelope-schema.ts";
import type { ProviderSpec } from "../protocol/manifest-schema.ts";
import { type Picked, pickProviders, type Plan } from "../core/plan.ts";
import type { SuspensionView } from "../core/suspension.ts";
import { type BreakerReads, Suspensions } from "./suspensions.ts";
import { executePlan, type SearchDeps } from "../core/search.ts";
import { type Caller, entitlement, GATEWAY_SUBJECT, subjectOf } from "../core/caller.ts";
import type { ResolvedConfig } from "../config/gateway-config.ts";
import {
  type Admission,
  admitted,
  atLimit,
  refused,
  type RunOptions,
  type SearchAsk,
} from "./search-run.ts";
import { Slots } from "./slots.ts";
import { Descriptions } from "./descriptions.ts";
import { HealthProbes } from "./health-probes.ts";
import type { ProviderState } from "../protocol/envelope-schema.ts";
import { providerStates } from "./provider-states.ts";
import { DESCRIBE_TIMEOUT_MS } from "../protocol/limits.ts";
import type { ExpandAsk, RefreshAsk } from "../protocol/action-request.ts";
import { Flight, type OnAttempt, type StartFlight } from "./flight.ts";
import { letGo, sharedFlight } from "./shared-flight.ts";
import { isPublic, searchIdentity } from "./search-identity.ts";
import type { ActionAsk, ActionHost } from "./action-run.ts";
import { MiningGate } from "./mining/mining-gate.ts";
import { Background } from "./background.ts";
import { ProviderLinks, tokenHeaders, unavailableIn } from "../config/provider-clients.ts";
import { charged, costFixed, heldBack, NO_READS, planWith } from "./plan-providers.ts";
import type { ProbeHost } from "./suspension-probe.ts";
import { AnswerCaching, unlessCached } from "./answer-caching.ts";
import { lazy } from "../core/lazy-module.ts";
import type { AnswerCacheHook } from "../core/cached-attempt.ts";
import type { FlightRole } from "../state/shared-state.ts";
import { afterCount, countedThen, countSearch, joined, placeFor } from "./admission.ts";
import type { PageFetching } from "./page-fetching.ts";
import { observedAdmission } from "./observed-admission.ts";
import type { GaugeSources } from "../core/telemetry.ts";

/** A search with a slot of its own, as it is admitted. */
type Owned = {
  ask: SearchAsk;
  deps: SearchDeps;
  key: string;
  picked: Picked;
  release: () => void;
  /** When it was admitted, by `config.now`: its budget counts from then. */
  startedAt: number;
};

/** An owned search planned and counted, with what it started in the store. */
type Started = Owned & {
  plan: Plan;
  reads: BreakerReads;
  claim: Promise<FlightRole | null> | null;
  cache: AnswerCacheHook | undefined;
  background: Background;
  /** What is left of its budget. */
  left: () => number;
};

/** action-run.ts, loaded with the first expand or refresh: a module of its own on the Worker. */
const loadActionRun = lazy(() => import("./action-run.ts"));
/** suspension-probe.ts, loaded with the first probe of a suspended provider: a module of its own. */
const loadSuspensionProbe = lazy(() => import("./suspension-probe.ts"));
/** page-fetching.ts, loaded with the first page fetch: a module of its own on the Worker. */
const loadPageFetching = lazy(() => import("./page-fetching.ts"));

export class GatewayState {
  readonly #links: ProviderLinks;
  readonly #searches: Slots;
  /** Fan-outs in flight by search identity (docs/envelope.md, "Coalescing"). */
  readonly #flights = new Map<string, Flight>();
  /** Flights claimed in the shared store by searches not yet started, by search identity. */
  readonly #claiming = new Map<string, Promise<FlightRole | null>>();
  /** Providers left out after failing, for this instance only (docs/protocol.md, "Suspension"). */
  readonly #suspensions: Suspensions | null;
  /** What each provider said it speaks (docs/protocol.md, "describe"); null when not asked. */
  readonly #descriptions: Descriptions | null;
  /** Each provider's last health probe, shared by every caller (docs/envelope.md). */
  readonly #health: HealthProbes;
  /** What the gateway's own suspension probes use: they ask as the gateway, never a caller. */
  readonly #probes: ProbeHost;
  /** What every caller's searches share. */
  readonly #shared: Omit<SearchDeps, "entitlement" | "headersFor">;
  /** What an expand or refresh reads of this instance (action-run.ts). */
  readonly #actions: ActionHost;
  /** Search traces (docs/envelope.md, "Mining"); null when no sink is configured. */
  readonly mining: MiningGate | null;
  /** Providers' answers kept for `cache_ttl_seconds` (docs/envelope.md, "Cached answers"). */
  readonly #caching: AnswerCaching;
  /** Page fetches (docs/envelope.md, "Fetching a page"), made with the first: see pageFetching. */
  #fetching: PageFetching | null = null;

  constructor(readonly config: ResolvedConfig) {
    this.#links = new ProviderLinks(config);
    this.mining = config.mining === null ? null : new MiningGate(config.mining);
    this.#caching = new AnswerCaching(config);
    this.#searches = new Slots(config.maxInflight);
    this.#suspensions = config.suspendProviders ? new Suspensions(config.state, config.now) : null;
    this.#descriptions = config.describeProviders
      ? new Descriptions(config.now, (spec) => this.#links.client(spec), config.state)
      : null;
    const descriptions = this.#descriptions;
    this.#health = new HealthProbes(
      config.now,
      config.wallClock,
      (spec) => this.#links.client(spec),
      (spec) => descriptions?.declares(spec, "health"),
      config.state,
    );
    this.#probes = {
      client: (spec) => this.#links.client(spec),
      gate: (spec) => this.#links.gate(spec),
      headersFor: tokenHeaders(this.config, GATEWAY_SUBJECT),
      declaresHealth: (spec) => descriptions?.declares(spec, "health"),
    };
    this.#shared = {
      manifest: config.manifest,
      maxProviders: config.maxProviders,
      unavailable: (spec) => this.unavailable(spec),
      versionProblem: descriptions ? (spec) => descriptions.versionProblem(spec) : undefined,
      acceptsFilters: descriptions ? (spec) => descriptions.filtersOf(spec) : undefined,
      declaresStats: descriptions
        ? (spec) => descriptions.declares(spec, "stats") === true
        : undefined,
      clientFor: (spec) => this.#links.client(spec),
      gateFor: (spec) => this.#links.gate(spec),
      now: config.now,
      searchBudgetBytes: config.searchBudgetBytes,
      maxPendingConnections: config.maxPendingConnections,
      metrics: config.telemetry.metrics,
    };
    this.#actions = {
      config,
      visibleTo: (caller) => this.visibleTo(caller),
      unavailable: (spec) => this.unavailable(spec),
      suspensionOf: (spec) => this.suspensionOf(spec),
      versionProblem: (spec) => descriptions?.versionProblem(spec) ?? null,
      declares: (spec, action) => descriptions?.declares(spec, action),
      client: (spec) => this.#links.client(spec),
      gate: (spec) => this.#links.gate(spec),
      tokenHeaders: (caller) => tokenHeaders(this.config, subjectOf(caller)),
      recordHealth: (name, answer) => this.#health.record(name, answer),
      invalidateCache: (name) => this.#caching.invalidate(name),
    };
  }

  /**
   * Page fetches' admission and cache (docs/envelope.md, "Fetching a page"), made with the first
   * fetch: they share this instance's in-flight slots with its searches.
   */
  async pageFetching(): Promise<PageFetching> {
    const { PageFetching } = await loadPageFetching();
    return this.#fetching ??= new PageFetching(this.config, this.#searches);
  }

  /** Searches admitted and not yet answered. */
  get searchesInFlight(): number {
    return this.#searches.taken;
  }

  /** What the metrics read at each collection (docs/deploy.md, "Observing it"). */
  gauges(): GaugeSources {
    return {
      searchesInFlight: () => this.searchesInFlight,
      suspended: async () => {
        const states = new Map<string, boolean>();
        for (const spec of this.config.manifest.providers) {
          states.set(spec.name, (await this.suspensionOf(spec)).state === "suspended");
        }
        return states;
      },
      sharedStateFallbacks: () => this.config.state.status().fallbacks,
    };
  }

  /**
   * Admits a search: picks its providers, then joins an identical search in flight or takes an
   * in-flight slot, and only then counts it against its caller's limits, so a search this
   * instance sheds for its own load (429 `overloaded`) costs its caller nothing. Call it only once
   * the request was read and validated, so a slow or broken sender never holds a slot.
   */
  admit(ask: SearchAsk): Admission | Promise<Admission> {
    const metrics = this.config.telemetry.metrics;
    if (metrics === null) return this.#admit(ask);
    return observedAdmission(metrics, this.config.now, () => this.#admit(ask));
  }

  #admit(ask: SearchAsk): Admission | Promise<Admission> {
    // The cache's code is loaded with the first search that may use it.
    const loading = this.#caching.ready();
    if (loading !== null) return loading.then(() => this.#admit(ask));
    const startedAt = this.config.now();
    const deps = this.#depsFor(ask.caller);
    const picked = pickProviders(ask.request, deps);
    if (!picked.ok) return refused(picked.problem, ask.requestId);
    // What it names, not what runs: who may share a search must not change as providers come and go.
    const key = searchIdentity(ask.request, ask.caller, picked.picked.named);
    const place = placeFor(this.#flights, this.#searches, key);
    if (place === null) return atLimit(ask.requestId);
    if (place.kind === "joined") {
      const { flight, leave } = place;
      const charges = charged(this.config.manifest, flight.decision);
      return countedThen(this.config, ask, charges, leave, () => {
        return joined(flight, ask, leave, this.mining);
      }, { budgetMs: ask.request.timeout_ms });
    }
    return this.#own({ ask, deps, key, picked: picked.picked, release: place.release, startedAt });
  }

  /**
   * With a slot of its own: reads the breakers, plans which providers run, counts the search
   * against its caller's limits, and starts. Every call it makes to a shared store before its
   * providers (the breakers' read, the flight's claim, the cache's lookups, the caller's log)
   * starts in this one turn, so the store gets them as one round trip (docs/decisions.md, "One
   * round trip before the providers"); with the memory adapter none of them waits at all.
   */
  #own(own: Owned): Admission | Promise<Admission> {
    const { ask, deps, key, picked, release } = own;
    const { state, manifest } = this.config;
    const left = () => ask.request.timeout_ms - (this.config.now() - own.startedAt);
    const background = new Background();
    // A flight is claimed in a store only when no result a token unlocked could reach it, and
    // once per instance: an identical search admitted meanwhile joins the one that claimed it.
    const shared = state.backend !== "memory" && picked.named.every(isPublic);
    const limited = manifest.caller_limits !== undefined;
    // Durable Objects share no call between objects, and a flight's object a refused search
    // claimed would be made for nothing: there the claim waits for the caller's verdict.
    const early = !(limited && state.backend === "durable_objects");
    const claim = shared && early && !this.#claiming.has(key)
      ? Promise.resolve(state.flight(key, left()))
      : null;
    if (claim !== null) this.#claiming.set(key, claim);
    const settled = () => {
      if (claim !== null && this.#claiming.get(key) === claim) this.#claiming.delete(key);
    };
    const giveBack = () => {
      release();
      settled();
      void letGo(claim);
    };
    const reads = this.#suspensions?.read(picked.named, left()) ?? NO_READS;
    const known = reads instanceof Promise ? null : planWith(picked, deps, reads);
    // Until the breakers answer, the lookups and the log go by the plan with none suspended.
    const hoped = known ?? planWith(picked, deps, NO_READS);
    const cache = this.#caching.hookFor(ask, (work) => background.run(work), left);
    cache?.warm?.(hoped.run);
    const counted =
      limited && (known !== null || costFixed(this.config.manifest, picked, deps, hoped))
        ? countSearch(this.config, ask, "search", charged(manifest, hoped.decision), left())
        : null;
    const go = (reads: BreakerReads): Admission | Promise<Admission> => {
      const plan = known ?? planWith(picked, deps, reads);
      const admit = () => {
        // The store's answers arrive later: an identical search may have started meanwhile.
        const flight = this.#flights.get(key);
        if (flight !== undefined) {
          giveBack();
          return joined(flight, ask, flight.join(), this.mining);
        }
        settled();
        // Claimed now when the claim waited for the verdict, or the search that made it was refused.
        const mine = claim ?? (shared ? Promise.resolve(state.flight(key, left())) : null);
        return this.#start({ ...own, plan, reads, claim: mine, cache, background, left });
      };
      const counting = counted ??
        (limited
          ? countSearch(this.config, ask, "search", charged(manifest, plan.decision), left())
          : null);
      return counting === null ? admit() : afterCount(counting, giveBack, admit);
    };
    if (!(reads instanceof Promise)) return go(reads);
    return reads.then(go, (error) => {
      giveBack();
      throw error;
    });
  }

  /** Starts the fan-out of a planned search, which holds `release`'s slot. */
  #start(started: Started): Admission {
    const { ask, deps, key, plan, reads, claim, cache, background, left, release } = started;
    const { request, requestId } = ask;
    // In the same turn as the flight is registered, so no other search can claim the same probe.
    const suspension = this.#suspensions?.watch(
      heldBack(this.config.manifest, plan.decision),
      reads,
      (claim) =>
        background.run(async () => (await loadSuspensionProbe()).runProbe(this.#probes, claim)),
    );
    const runHere = (signal: AbortSignal, onAttempt: OnAttempt) =>
      executePlan({
        request,
        plan,
        deps,
        requestId,
        suspension,
        signal,
        onAttempt,
        cache,
        trace: ask.trace,
        startedAt: started.startedAt,
      });
    const alone: StartFlight = (signal, onAttempt) => ({
      joined: Promise.resolve(false),
      result: runHere(signal, onAttempt),
    });
    const later = (work: () => Promise<void>) => background.run(work);
    const start: StartFlight = claim === null ? alone : unlessCached(
      cache,
      plan.run,
      sharedFlight(this.config.state, key, request.query, runHere, later, claim, left),
      alone,
      () => later(() => letGo(claim)),
    );
    const flight: Flight = new Flight(plan.decision, start, () => {
      if (this.#flights.get(key) === flight) this.#flights.delete(key);
    });
    this.#flights.set(key, flight);
    const search = admitted(flight, ask, false, release, this.mining);
    return { ok: true, search: background.around(search) };
  }

  /** Admits and runs a search, and answers with its envelope (the CLI's in-process search). */
  async search(ask: SearchAsk, options: RunOptions): Promise<Envelope> {
    const admission = await this.admit(ask);
    if (!admission.ok) return admission.envelope;
    return await admission.search.run(options, (run) => run.envelope);
  }

  /** `POST /v1/expand`: the evidence behind a locator, from the one provider named. */
  async expand(ask: ActionAsk<ExpandAsk>): Promise<Envelope> {
    if (this.config.manifest.caller_limits !== undefined) {
      // An expand is a search as the caller's limits count, costing what a search of its provider does.
      const named = this.config.manifest.providers.filter((p) => p.name === ask.request.provider);
      const limited = await countSearch(this.config, ask, "expand", named);
      if (limited !== null) {
        this.config.telemetry.metrics?.refused(limited.code);
        return limited;
      }
    }
    const { runExpand } = await loadActionRun();
    return await runExpand(this.#actions, ask);
  }

  /** `POST /v1/refresh`: the named provider brings its index up to date (ADMIN_SCOPE only). */
  async refresh(ask: ActionAsk<RefreshAsk>): Promise<Envelope> {
    const { runRefresh } = await loadActionRun();
    return await runRefresh(this.#actions, ask);
  }

  /**
   * Every provider this caller may see, as `/v1/status` (the cached health, no probe) and
   * `/v1/doctor` (`probe`: a fresh health, each probed at most once per TTL) show it.
   */
  async providerStates(caller: Caller, probe: boolean): Promise<ProviderState[]> {
    return await providerStates(this, this.#health, caller, probe);
  }

  /** A provider's suspension, as `/v1/status` shows it. */
  async suspensionOf(spec: ProviderSpec): Promise<SuspensionView> {
    return await this.#suspensions?.view(spec) ?? { state: "ready", consecutiveFailures: 0 };
  }

  /** The providers this caller may see, in manifest order. */
  visibleTo(caller: Caller): ProviderSpec[] {
    return this.config.manifest.providers.filter((p) => entitlement(caller, p) === "granted");
  }

  /** Why a provider cannot be contacted with this configuration, or null when it can. */
  unavailable(spec: ProviderSpec): SkipReason | null {
    return unavailableIn(this.config, spec);
  }

  /**
   * Starts, in the background, a describe of each provider this caller may see whose answer is
   * missing or stale; a search never waits for it.
   */
  #describeFor(caller: Caller): void {
    const descriptions = this.#descriptions;
    if (descriptions === null) return;
    // A describe answer serves every caller: it asks as the gateway, not as this caller.
    const headersFor = tokenHeaders(this.config, GATEWAY_SUBJECT);
    for (const spec of this.visibleTo(caller)) {
      if (this.unavailable(spec) !== null) continue;
      descriptions.ask(
        spec,
        async () => headersFor ? await headersFor(spec, DESCRIBE_TIMEOUT_MS) : {},
      );
    }
  }

  /** The search dependencies as one caller sees them: sensitive providers only when entitled. */
  #depsFor(caller: Caller): SearchDeps {
    const headersFor = tokenHeaders(this.config, subjectOf(caller));
    this.#describeFor(caller);
    return {
      ...this.#shared,
      entitlement: (spec) => entitlement(caller, spec),
      headersFor,
    };
  }
}
