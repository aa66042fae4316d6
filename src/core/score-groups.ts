/**
 * Which members of a search's plan take part in a statistics round (score-group-stats.ts): those
 * of each score group with at least two planned members that declare `stats` (one member alone
 * has nothing to sum). The round's code is a module of its own (on Workers, beside the main
 * module), loaded in the background by the first plan that holds a score group: its members are
 * described only after the first search reaches the gateway, so by the time one declares `stats`
 * the code is there, and a search waits for it only if it is not.
 */
import type { ProviderSpec } from "../protocol/manifest-schema.ts";
import type { StatsRound } from "./score-group-stats.ts";
import { lazy } from "./lazy-module.ts";

/** A failed load is tried again by the next plan that needs it (lazy-module.ts). */
const load = lazy(() => import("./score-group-stats.ts"));

const NONE: ReadonlyMap<string, StatsRound> = new Map();

/**
 * The round of each member taking part, by name; none without `declaresStats` (no provider was
 * described), and at once when the plan holds no round.
 */
export function statsRounds(
  run: readonly ProviderSpec[],
  declaresStats: ((spec: ProviderSpec) => boolean) | undefined,
  now: () => number,
): ReadonlyMap<string, StatsRound> | Promise<ReadonlyMap<string, StatsRound>> {
  if (declaresStats === undefined || !run.some((spec) => spec.score_group !== undefined)) {
    return NONE;
  }
  const code = load();
  const groups = new Map<string, string[]>();
  for (const spec of run) {
    if (spec.score_group === undefined || !declaresStats(spec)) continue;
    const members = groups.get(spec.score_group);
    if (members === undefined) groups.set(spec.score_group, [spec.name]);
    else members.push(spec.name);
  }
  const rounds = [...groups.values()].filter((members) => members.length >= 2);
  if (rounds.length === 0) return NONE;
  return code.then(({ StatsRound }) => {
    const byMember = new Map<string, StatsRound>();
    for (const members of rounds) {
      const round = new StatsRound(members, now);
      for (const member of members) byMember.set(member, round);
    }
    return byMember;
  });
}
