/**
 * The corpus provider's inverted index: for each term the documents that hold it and how often,
 * each document's length, and the collection's totals, all counted the one way the scores and the
 * `stats` action use them. A title's terms count once more than the text's (TITLE_EXTRA_COUNT), so
 * every count stays a whole number that shards of one index can add up exactly.
 */
import { termsOf } from "../../src/core/terms/text-terms.ts";

/**
 * How many more times a title's terms count than the text's. Title and text are one field, so a
 * term's frequency and the document's length are counted once; the title once more is worth a
 * little on Cranfield (0.391 against 0.390 nDCG@10, docs/quality.md) and is what a reader expects
 * of a page titled with the query's words. A whole number keeps every count exact.
 */
const TITLE_EXTRA_COUNT = 1;

/**
 * Completions a prefix reaches at most, the most frequent first: a query still being typed ("rate
 * lim") is served by the common words its prefix starts, and a 3-letter prefix can reach hundreds.
 */
const MAX_PREFIX_EXPANSIONS = 64;

export type IndexedDocument = { title: string; text: string };

/** One term's documents (ascending) and its frequency in each. */
type Postings = { docs: number[]; tfs: number[]; cf: number };

export class CorpusIndex {
  readonly documentCount: number;
  readonly totalLength: number;
  /** Each document's length in terms, counted as its frequencies are. */
  readonly lengths: Float64Array;
  readonly #postings = new Map<string, Postings>();
  /** Every term, sorted, for prefix lookups. */
  readonly #sorted: string[];
  /** Each document's terms and frequencies, kept only for query feedback. */
  readonly #vectors: Array<Map<string, number>> | null;

  constructor(
    documents: readonly IndexedDocument[],
    readonly stemming: boolean,
    keepVectors: boolean,
  ) {
    this.documentCount = documents.length;
    this.lengths = new Float64Array(documents.length);
    this.#vectors = keepVectors ? [] : null;
    let total = 0;
    documents.forEach((doc, id) => {
      const counts = new Map<string, number>();
      let length = 0;
      for (const term of termsOf(`${doc.title}\n${doc.text}`, stemming)) {
        counts.set(term, (counts.get(term) ?? 0) + 1);
        length++;
      }
      for (const term of termsOf(doc.title, stemming)) {
        counts.set(term, (counts.get(term) ?? 0) + TITLE_EXTRA_COUNT);
        length += TITLE_EXTRA_COUNT;
      }
      this.lengths[id] = length;
      total += length;
      this.#vectors?.push(counts);
      for (const [term, tf] of counts) {
        const p = this.#postings.get(term);
        if (p === undefined) this.#postings.set(term, { docs: [id], tfs: [tf], cf: tf });
        else {
          p.docs.push(id);
          p.tfs.push(tf);
          p.cf += tf;
        }
      }
    });
    this.totalLength = total;
    this.#sorted = [...this.#postings.keys()].sort();
  }

  postings(term: string): Readonly<Postings> | undefined {
    return this.#postings.get(term);
  }

  /** Document frequency and collection frequency of a term; zeros when no document holds it. */
  frequencies(term: string): { df: number; cf: number } {
    const p = this.#postings.get(term);
    return p === undefined ? { df: 0, cf: 0 } : { df: p.docs.length, cf: p.cf };
  }

  /** Whether document `doc` holds `term`. */
  holds(doc: number, term: string): boolean {
    const docs = this.#postings.get(term)?.docs;
    if (docs === undefined) return false;
    let lo = 0;
    let hi = docs.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const at = docs[mid] as number;
      if (at === doc) return true;
      if (at < doc) lo = mid + 1;
      else hi = mid - 1;
    }
    return false;
  }

  /**
   * The indexed terms that start with `prefix` (the term itself left out), at most
   * MAX_PREFIX_EXPANSIONS of the most frequent, in sorted order.
   */
  completions(prefix: string): string[] {
    const sorted = this.#sorted;
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((sorted[mid] as string) < prefix) lo = mid + 1;
      else hi = mid;
    }
    const found: string[] = [];
    for (let i = lo; i < sorted.length && (sorted[i] as string).startsWith(prefix); i++) {
      if (sorted[i] !== prefix) found.push(sorted[i] as string);
    }
    if (found.length <= MAX_PREFIX_EXPANSIONS) return found;
    return found
      .map((term) => ({ term, df: this.frequencies(term).df }))
      .sort((a, b) => b.df - a.df || (a.term < b.term ? -1 : 1))
      .slice(0, MAX_PREFIX_EXPANSIONS)
      .map((x) => x.term)
      .sort();
  }

  /** A document's terms and frequencies, for query feedback; empty when vectors are not kept. */
  vector(doc: number): ReadonlyMap<string, number> {
    return this.#vectors?.[doc] ?? new Map();
  }
}
