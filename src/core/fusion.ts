/**
 * Weighted reciprocal rank fusion (docs/architecture.md): score = sum over providers of
 * weight / (k + rank). Providers in one score group (shards of one index, docs/protocol.md) first
 * merge into one list by their `metadata.score`, and a page's rank in that list is its rank for
 * fusion: RRF over disjoint shards would interleave them round-robin whatever their scores say.
 * Inputs are walked in plan order, so the output is identical whatever order providers answered in.
 */
import type { EvidenceState, Sensitivity } from "../protocol/codes.ts";
import type { AttemptRecord, Candidate, MergedEntry } from "../protocol/envelope-schema.ts";
import { RRF_K } from "../protocol/limits.ts";
import { dedupKey, shownLocator } from "./dedup-key.ts";

/**
 * What fusion reads of a successful attempt: its record, as `result.candidates` lists it (who
 * found what, in which scope and sensitivity).
 */
export type FusedAttempt =
  & Pick<AttemptRecord, "provider" | "scope" | "source_class" | "sensitivity">
  & { candidates?: readonly Candidate[] | undefined };

/** One successful attempt, and what its provider's manifest entry adds for fusion. */
export type FusionInput = {
  /** Index of the attempt in `result.candidates` (plan order). */
  index: number;
  attempt: FusedAttempt;
  evidence_state: EvidenceState;
  weight: number;
  /** Providers naming the same group send comparable `metadata.score` values. */
  score_group?: string | undefined;
};

const RESTRICTIVENESS: Record<Sensitivity, number> = {
  public: 0,
  "account-visible": 1,
  internal: 2,
};

type Working = {
  entry: Omit<MergedEntry, "rank">;
  /** The best appearance so far: its rank and where it is in plan order. */
  shownRank: number;
  firstSeen: number;
};

export function fuse(inputs: readonly FusionInput[], limit: number): MergedEntry[] {
  const byKey = new Map<string, Working>();
  let order = 0;
  const sorted = [...inputs].sort((a, b) => a.index - b.index);
  const groupRanks = scoreGroupRanks(sorted);
  for (const input of sorted) {
    const { attempt } = input;
    const seenHere = new Set<string>();
    const fusionRanks = groupRanks.get(input.index);
    (attempt.candidates ?? []).forEach((c, citation) => {
      const key = dedupKey(c.locator);
      // A page listed twice by one provider counts once, at its best (first) rank.
      if (seenHere.has(key)) return;
      seenHere.add(key);
      const rank = citation + 1;
      const fusionRank = fusionRanks === undefined ? rank : fusionRanks[citation] ?? 0;
      const contribution = fusionRank === 0 ? 0 : input.weight / (RRF_K + fusionRank);
      const w = byKey.get(key);
      if (w === undefined) {
        // One literal of the entry's final shape, in the envelope's field order: adding fields to
        // a smaller object, or spreading one, took V8's slow path.
        const entry: Working["entry"] = {
          locator: c.locator,
          title: c.title,
          snippet: c.snippet,
          published_at: c.published_at,
          scope: attempt.scope,
          source_class: attempt.source_class,
          evidence_state: input.evidence_state,
          sensitivity: attempt.sensitivity,
          found_by: [attempt.provider],
          found_in: [{ candidate: input.index, citation }],
          best_rank: rank,
          score: contribution,
        };
        byKey.set(key, { entry, shownRank: rank, firstSeen: order++ });
        return;
      }
      const e = w.entry;
      e.score += contribution;
      e.found_by.push(attempt.provider);
      e.found_in.push({ candidate: input.index, citation });
      e.best_rank = Math.min(e.best_rank, rank);
      if (RESTRICTIVENESS[attempt.sensitivity] > RESTRICTIVENESS[e.sensitivity]) {
        e.sensitivity = attempt.sensitivity;
      }
      // The entry shows its best-ranked appearance (its locator as shownLocator tidies it); on a
      // tie the earlier one in plan order stays.
      if (rank < w.shownRank) {
        w.shownRank = rank;
        show(e, c, input);
      }
    });
  }
  const ranked = [...byKey.values()].sort((a, b) =>
    b.entry.score - a.entry.score ||
    b.entry.found_by.length - a.entry.found_by.length ||
    a.entry.best_rank - b.entry.best_rank ||
    a.firstSeen - b.firstSeen
  );
  return ranked.slice(0, limit).map((w, i): MergedEntry => {
    const e = w.entry;
    return {
      rank: i + 1,
      locator: shownLocator(e.locator),
      title: e.title,
      snippet: e.snippet,
      published_at: e.published_at,
      scope: e.scope,
      source_class: e.source_class,
      // Content a caller may only see as internal keeps that label whichever appearance is shown.
      evidence_state: e.sensitivity === "internal" ? "candidate-only-internal" : e.evidence_state,
      sensitivity: e.sensitivity,
      found_by: e.found_by,
      found_in: e.found_in,
      best_rank: e.best_rank,
      score: e.score,
    };
  });
}

/**
 * For each input in a score group, the rank of each of its citations in the group's merged list
 * (by `metadata.score`, highest first; a candidate without a finite score after every scored one,
 * in its provider's order), or 0 when an earlier citation in the group already ranked that page:
 * shards that both hold a page count it once.
 */
function scoreGroupRanks(inputs: readonly FusionInput[]): Map<number, number[]> {
  const groups = new Map<string, FusionInput[]>();
  for (const input of inputs) {
    if (input.score_group === undefined) continue;
    const members = groups.get(input.score_group);
    if (members === undefined) groups.set(input.score_group, [input]);
    else members.push(input);
  }
  const out = new Map<number, number[]>();
  for (const members of groups.values()) {
    const listed: Array<{ input: number; citation: number; score: number; key: string }> = [];
    for (const input of members) {
      const candidates = input.attempt.candidates ?? [];
      out.set(input.index, new Array<number>(candidates.length).fill(0));
      candidates.forEach((c, citation) => {
        const score = c.metadata.score;
        listed.push({
          input: input.index,
          citation,
          score: typeof score === "number" && Number.isFinite(score) ? score : -Infinity,
          key: dedupKey(c.locator),
        });
      });
    }
    // Stable: equal scores keep plan order, then each provider's own order.
    listed.sort((a, b) => a.score === b.score ? 0 : b.score - a.score);
    const ranked = new Set<string>();
    for (const item of listed) {
      if (ranked.has(item.key)) continue;
      ranked.add(item.key);
      (out.get(item.input) as number[])[item.citation] = ranked.size;
    }
  }
  return out;
}

type Shown = Pick<
  MergedEntry,
  "locator" | "title" | "snippet" | "published_at" | "scope" | "source_class" | "evidence_state"
>;

/** Shows another appearance of an entry: the candidate and the provider that found it there. */
function show(e: Shown, c: Candidate, input: FusionInput): void {
  e.locator = c.locator;
  e.title = c.title;
  e.snippet = c.snippet;
  e.published_at = c.published_at;
  e.scope = input.attempt.scope;
  e.source_class = input.attempt.source_class;
  e.evidence_state = input.evidence_state;
}
