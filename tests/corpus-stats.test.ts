/**
 * The corpus provider's `stats` answer and its search with a score group's sums: shards of one
 * corpus that score with the summed statistics give every document the score the whole corpus
 * gives it, and query feedback never runs on sums.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  corpusAdapter,
  type CorpusDocument,
  type CorpusOptions,
} from "../providers/corpus/corpus-adapter.ts";
import { RM3 } from "../providers/corpus/corpus-search.ts";
import { sumStats } from "../src/core/score-group-stats.ts";
import type { CollectionStats } from "../src/protocol/collection-stats.ts";
import { AERO_DOCUMENTS, doc } from "./support/aero-documents.ts";

const signal = new AbortController().signal;

/** The last page without the query's words, so each third of them has its own frequencies. */
const DOCS: CorpusDocument[] = [
  ...AERO_DOCUMENTS.slice(0, 8),
  doc(8, "Plates", "skin friction of a flat plate"),
];
const QUERY = "supersonic flow over a wing with shock waves";

async function scores(
  docs: CorpusDocument[],
  query: string,
  sums?: CollectionStats,
  options: CorpusOptions = {},
): Promise<Map<string, number>> {
  const adapter = corpusAdapter("c", "local", docs, options);
  const answer = await adapter.search(
    { query, limit: 100, ...(sums === undefined ? {} : { collection_stats: sums }) },
    signal,
  );
  return new Map(answer.candidates.map((c) => [c.locator, c.metadata?.score as number]));
}

async function statsOf(docs: CorpusDocument[], query: string): Promise<CollectionStats> {
  const adapter = corpusAdapter("c", "local", docs);
  return await adapter.stats!({ query }, signal);
}

const thirds = [DOCS.slice(0, 3), DOCS.slice(3, 6), DOCS.slice(6)];

describe("corpus stats", () => {
  it("answers the document count, the total length and each query term's frequencies", async () => {
    const stats = await statsOf(DOCS.slice(0, 2), "supersonic flows and nothing");
    assert.equal(stats.document_count, 2);
    // Title and text as one field, the title's terms counted once more: 2 + 5 + 2 and 2 + 6 + 2.
    assert.equal(stats.total_length, 19);
    assert.deepEqual(stats.terms, [
      { term: "superson", document_frequency: 1, collection_frequency: 3 },
      { term: "flow", document_frequency: 2, collection_frequency: 4 },
    ]);
  });

  it("gives each shard's documents the whole corpus's scores when they score with the sums", async () => {
    const central = await scores(DOCS, QUERY);
    const sums = sumStats(await Promise.all(thirds.map((part) => statsOf(part, QUERY))));
    assert.ok(sums !== null);
    const sharded = new Map<string, number>();
    for (const part of thirds) {
      for (const [locator, score] of await scores(part, QUERY, sums)) sharded.set(locator, score);
    }
    assert.deepEqual(sharded, central);
    // Each shard's own statistics would not: the test would pass for nothing otherwise.
    const alone = new Map<string, number>();
    for (const part of thirds) {
      for (const [locator, score] of await scores(part, QUERY)) alone.set(locator, score);
    }
    assert.notDeepEqual(alone, central);
  });

  it("keeps its own statistics when the sums do not cover it", async () => {
    const own = await scores(thirds[0] as CorpusDocument[], QUERY);
    const fewer = { ...await statsOf(DOCS.slice(0, 1), QUERY) };
    assert.deepEqual(await scores(thirds[0] as CorpusDocument[], QUERY, fewer), own);
  });

  it("never expands the query with feedback when it scores with a score group's sums", async () => {
    const sums = await statsOf(DOCS, QUERY);
    const plain = await scores(DOCS, QUERY, sums);
    const withFeedback = await scores(DOCS, QUERY, sums, { feedback: RM3 });
    assert.deepEqual(withFeedback, plain);
    // Without the sums the same adapter expands the query, and the scores change.
    assert.notDeepEqual(await scores(DOCS, QUERY, undefined, { feedback: RM3 }), plain);
  });
});

describe("sumStats", () => {
  it("adds counts, adds each term over the members that hold it, and counts a repeat once", () => {
    const sums = sumStats([
      {
        document_count: 2,
        total_length: 10,
        terms: [
          { term: "a", document_frequency: 1, collection_frequency: 2 },
          { term: "a", document_frequency: 9, collection_frequency: 9 },
        ],
      },
      {
        document_count: 3,
        total_length: 7,
        terms: [
          { term: "b", document_frequency: 2, collection_frequency: 2 },
          { term: "a", document_frequency: 1, collection_frequency: 1 },
        ],
      },
    ]);
    assert.deepEqual(sums, {
      document_count: 5,
      total_length: 17,
      terms: [
        { term: "a", document_frequency: 2, collection_frequency: 3 },
        { term: "b", document_frequency: 2, collection_frequency: 2 },
      ],
    });
  });

  it("gives up (null) rather than send a sum a JSON number cannot hold exactly", () => {
    const big = { document_count: Number.MAX_SAFE_INTEGER, total_length: 1, terms: [] };
    assert.equal(sumStats([big, { ...big, document_count: 1 }]), null);
  });
});
