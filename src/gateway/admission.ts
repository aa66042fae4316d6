/**
 * Where an admitted search waits and what it costs its caller (docs/envelope.md, "Caller limits"):
 * a search joins an identical one in flight or takes an in-flight slot first, and is counted
 * against its caller's limits only then, so a search shed as 429 `overloaded` is never counted. A
 * search its caller's limit refuses gives its place back.
 */
import type { Command } from "../protocol/codes.ts";
import type { Envelope } from "../protocol/envelope-schema.ts";
import type { ProviderSpec } from "../protocol/manifest-schema.ts";
import { lazy } from "../core/lazy-module.ts";
import type { CallerAsk } from "./caller-limits.ts";
import type { Flight } from "./flight.ts";
import type { MiningGate } from "./mining/mining-gate.ts";
import { type Admission, admitted, type SearchAsk } from "./search-run.ts";
import type { Slots } from "./slots.ts";
import type { ResolvedConfig } from "../config/gateway-config.ts";

/** caller-limits.ts, loaded with the first search a manifest's caller limits count. */
const loadCallerLimits = lazy(() => import("./caller-limits.ts"));

/** Where an admitted search waits: on an identical search in flight, or in a slot of its own. */
export type Place =
  | { kind: "joined"; flight: Flight; leave: () => void }
  | { kind: "own"; release: () => void };

/** A place for a search: an identical one in flight to join, or a slot; null when neither. */
export function placeFor(flights: Map<string, Flight>, slots: Slots, key: string): Place | null {
  const flight = flights.get(key);
  if (flight !== undefined) return { kind: "joined", flight, leave: flight.join() };
  const release = slots.tryTake();
  return release === null ? null : { kind: "own", release };
}

/** A search that joined `flight`, counted in on it (`leave` counts it out). */
export function joined(
  flight: Flight,
  ask: SearchAsk,
  leave: () => void,
  mining: MiningGate | null,
): Admission {
  return { ok: true, search: admitted(flight, ask, true, null, mining, leave) };
}

/** What counting refuses: the caller's limit's envelope. */
export type Counted = { ok: false; envelope: Envelope };

/**
 * Counts a search (or, by `command`, a page fetch) that asks `providers` against its caller's
 * limits, then `admit`s it; refused (or failing), it gives its place back first. Without
 * `caller_limits`, it admits at once.
 */
export function countedThen<T extends { ok: boolean } = Admission>(
  config: Pick<ResolvedConfig, "manifest" | "state">,
  ask: CallerAsk,
  providers: readonly ProviderSpec[],
  giveBack: () => void,
  admit: () => T,
  /** `command`: what is counted; `budgetMs`: the longest the count may wait for the store. */
  { command = "search", budgetMs }: { command?: Command; budgetMs?: number } = {},
): T | Promise<T | Counted> {
  if (config.manifest.caller_limits === undefined) return admit();
  return afterCount(countSearch(config, ask, command, providers, budgetMs), giveBack, admit);
}

/**
 * Admits once `counting` (a caller-limit step already started) admitted the search; refused (or
 * failing), it gives its place back first.
 */
export function afterCount<T extends { ok: boolean } = Admission>(
  counting: Promise<Envelope | null>,
  giveBack: () => void,
  admit: () => T,
): Promise<T | Counted> {
  return counting.then((envelope) => {
    if (envelope === null) return admit();
    giveBack();
    return { ok: false as const, envelope };
  }, (error) => {
    giveBack();
    throw error;
  });
}

/** caller-limits.ts's countSearch, its module loaded with the first count. */
export async function countSearch(
  config: Pick<ResolvedConfig, "manifest" | "state">,
  ask: CallerAsk,
  command: Command,
  providers: readonly ProviderSpec[],
  budgetMs?: number,
): Promise<Envelope | null> {
  return await (await loadCallerLimits()).countSearch(config, ask, command, providers, budgetMs);
}
