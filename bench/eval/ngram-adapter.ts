/**
 * Character n-gram TF-IDF with cosine similarity over title and text: a method that matches parts
 * of words (a stem, a compound's half, a misspelling), for the `methods` setups of `npm run eval`.
 * Each word of the corpus provider's terms (corpus-terms.ts, unstemmed), padded with a space on
 * either side, gives its 3- and 4-character grams; weights are (1 + ln tf) x ln(N / df) on both
 * sides, as in tfidf-adapter.ts.
 */
import type { CorpusDocument } from "../../providers/corpus/corpus-adapter.ts";
import { processTerm, tokenize } from "../../providers/corpus/corpus-terms.ts";
import type { SearchAdapter } from "../../src/kit/mod.ts";

/** Gram lengths: 3 and 4 characters, the usual pair for English words. */
const GRAM_LENGTHS = [3, 4];

function gramCounts(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const token of tokenize(text)) {
    const term = processTerm(token);
    if (term === null) continue;
    const padded = ` ${term} `;
    for (const n of GRAM_LENGTHS) {
      for (let i = 0; i + n <= padded.length; i++) {
        const gram = padded.slice(i, i + n);
        counts.set(gram, (counts.get(gram) ?? 0) + 1);
      }
    }
  }
  return counts;
}

export function ngramAdapter(
  name: string,
  scope: string,
  documents: readonly CorpusDocument[],
): SearchAdapter {
  const postings = new Map<string, Array<[number, number]>>();
  const counted = documents.map((doc) => gramCounts(`${doc.title}\n${doc.text}`));
  counted.forEach((counts, doc) => {
    for (const [gram, tf] of counts) {
      const list = postings.get(gram);
      if (list === undefined) postings.set(gram, [[doc, tf]]);
      else list.push([doc, tf]);
    }
  });
  const idf = (gram: string) =>
    Math.log(documents.length / (postings.get(gram)?.length ?? documents.length));
  const norms = counted.map((counts) => {
    let sum = 0;
    for (const [gram, tf] of counts) sum += ((1 + Math.log(tf)) * idf(gram)) ** 2;
    return Math.sqrt(sum);
  });
  return {
    name,
    scope,
    search({ query, limit }) {
      const dot = new Map<number, number>();
      for (const [gram, tf] of gramCounts(query)) {
        const list = postings.get(gram);
        if (list === undefined) continue;
        const weight = (1 + Math.log(tf)) * idf(gram);
        for (const [doc, dtf] of list) {
          dot.set(doc, (dot.get(doc) ?? 0) + weight * (1 + Math.log(dtf)) * idf(gram));
        }
      }
      // The query's norm is the same for every document: it changes no order, so it is left out.
      const ranked = [...dot]
        .map(([doc, sum]) => ({ doc, score: sum / (norms[doc] || 1) }))
        .filter((hit) => hit.score > 0)
        .sort((a, b) => b.score - a.score || a.doc - b.doc)
        .slice(0, limit);
      return Promise.resolve({
        candidates: ranked.map(({ doc, score }) => {
          const d = documents[doc] as CorpusDocument;
          return { title: d.title, locator: d.locator, snippet: null, metadata: { score } };
        }),
      });
    },
  };
}
