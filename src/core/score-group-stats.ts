/**
 * The statistics round of a score group (docs/protocol.md, "Shards of one index: score_group"):
 * before its search, each member that declared `stats` is asked what its collection holds for the
 * query's terms; the answers are summed once, and each member that answered gets the sums with its
 * search, so every shard scores with the statistics of the whole group. A member without `stats`,
 * or whose answer failed or came too late, keeps its own statistics.
 *
 * A member asks inside its own attempt, under its place at the provider and its deadline, so the
 * round costs one round trip of the group's members and nothing to providers outside a group.
 * score-groups.ts plans the rounds and loads this module the first time a plan holds a group.
 */
import type { CollectionStats, TermStats } from "../protocol/collection-stats.ts";
import { MAX_STATS_TERMS, STATS_ROUND_BUDGET_SHARE } from "../protocol/limits.ts";
import type { ProviderClient, StatsCall } from "../transport/provider-client.ts";

/** One group's round in one search, shared by the attempts of its members. */
export class StatsRound {
  /** Members in plan order, so the sums never depend on which answer came first. */
  readonly #members: readonly string[];
  readonly #answers = new Map<string, CollectionStats>();
  readonly #settled = new Set<string>();
  #sums: CollectionStats | null = null;
  #closed = false;
  #closeAt = Number.POSITIVE_INFINITY;
  #timer: ReturnType<typeof setTimeout> | undefined;
  readonly #done: Promise<void>;
  #resolve: () => void = () => {};

  constructor(members: readonly string[], private readonly now: () => number) {
    this.#members = members;
    this.#done = new Promise((resolve) => (this.#resolve = resolve));
  }

  /**
   * A member's part: asks its own statistics through `client` (under the member's deadline, in
   * `call`), waits for the round to close, and answers the sums when its statistics are in them,
   * else undefined.
   */
  async join(
    member: string,
    budgetMs: number,
    client: ProviderClient,
    query: string,
    call: StatsCall,
  ): Promise<CollectionStats | undefined> {
    const { signal } = call;
    this.#closeBy(this.now() + budgetMs * STATS_ROUND_BUDGET_SHARE);
    const own = await askStats(client, query, call).catch(() => null);
    if (own !== null && !this.#closed) this.#answers.set(member, own);
    this.withdraw(member);
    if (!this.#answers.has(member)) return undefined;
    await this.#closedOr(signal);
    // A member whose deadline fired while it waited goes on to its search, which reports it.
    return this.#closed && this.#sums !== null && this.#answers.has(member)
      ? this.#sums
      : undefined;
  }

  /** Settles when the round closes or `signal` fires, leaving no listener on the signal. */
  #closedOr(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const onAbort = () => resolve();
      signal.addEventListener("abort", onAbort, { once: true });
      void this.#done.then(() => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      });
    });
  }

  /** A member that will not answer (its attempt ended early); a no-op once it has. */
  withdraw(member: string): void {
    if (this.#settled.has(member)) return;
    this.#settled.add(member);
    if (this.#settled.size === this.#members.length) this.#close();
  }

  /** The round closes at the earliest of its members' shares of their budgets. */
  #closeBy(at: number): void {
    if (this.#closed || at >= this.#closeAt) return;
    this.#closeAt = at;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#close(), Math.max(0, at - this.now()));
  }

  #close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#timer);
    const answered = this.#members.flatMap((m) => this.#answers.get(m) ?? []);
    // Sums of one member are its own statistics: nothing to send.
    this.#sums = answered.length < 2 ? null : sumStats(answered);
    this.#resolve();
  }
}

/** One member's statistics for `query`, or null when the call did not bring a valid answer. */
async function askStats(
  client: ProviderClient,
  query: string,
  call: StatsCall,
): Promise<CollectionStats | null> {
  const result = await client.stats({ query }, call);
  if (result.kind !== "answer") return null;
  const { document_count, total_length, terms } = result.answer;
  return { document_count, total_length, terms };
}

/**
 * The statistics of the members' collections taken as one: counts added, each term's frequencies
 * added over the members that hold it (a term listed twice by one member counts once), terms in
 * the order they first appear, at most MAX_STATS_TERMS. Null when a sum would pass what a JSON
 * number holds exactly: the members then keep their own statistics.
 */
export function sumStats(answers: readonly CollectionStats[]): CollectionStats | null {
  let documents = 0;
  let length = 0;
  const terms = new Map<string, TermStats>();
  for (const answer of answers) {
    documents += answer.document_count;
    length += answer.total_length;
    const seen = new Set<string>();
    for (const t of answer.terms) {
      if (seen.has(t.term)) continue;
      seen.add(t.term);
      const sum = terms.get(t.term);
      if (sum !== undefined) {
        sum.document_frequency += t.document_frequency;
        sum.collection_frequency += t.collection_frequency;
      } else if (terms.size < MAX_STATS_TERMS) {
        terms.set(t.term, { ...t });
      }
    }
  }
  const all = [...terms.values()];
  const exact = [
    documents,
    length,
    ...all.flatMap((t) => [t.document_frequency, t.collection_frequency]),
  ]
    .every(Number.isSafeInteger);
  return exact ? { document_count: documents, total_length: length, terms: all } : null;
}
