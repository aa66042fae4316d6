/**
 * TF-IDF with cosine similarity over title and text: the classic vector-space method, here as a
 * second opinion beside BM25 for the `methods` setup of `npm run eval`. Weights are (1 + ln tf) x
 * ln(N / df) on both sides; the terms are the corpus provider's own (src/core/terms/text-terms.ts).
 */
import type { CorpusDocument } from "../../providers/corpus/corpus-adapter.ts";
import { processTerm, tokenize } from "../../src/core/terms/text-terms.ts";
import type { SearchAdapter } from "../../src/kit/mod.ts";

function termCounts(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const token of tokenize(text)) {
    const term = processTerm(token);
    if (term !== null) counts.set(term, (counts.get(term) ?? 0) + 1);
  }
  return counts;
}

export function tfidfAdapter(
  name: string,
  scope: string,
  documents: readonly CorpusDocument[],
): SearchAdapter {
  return cosineAdapter(name, scope, documents, termCounts);
}

/**
 * Cosine similarity over the features `count` finds in a text (terms, character grams), weighted
 * (1 + ln tf) x ln(N / df) on both sides, over title and text.
 */
export function cosineAdapter(
  name: string,
  scope: string,
  documents: readonly CorpusDocument[],
  count: (text: string) => Map<string, number>,
): SearchAdapter {
  const postings = new Map<string, Array<[number, number]>>();
  const counted = documents.map((doc) => count(`${doc.title}\n${doc.text}`));
  counted.forEach((counts, doc) => {
    for (const [term, tf] of counts) {
      const list = postings.get(term);
      if (list === undefined) postings.set(term, [[doc, tf]]);
      else list.push([doc, tf]);
    }
  });
  const idf = (term: string) => Math.log(documents.length / (postings.get(term)?.length ?? 1));
  const norms = counted.map((counts) => {
    let sum = 0;
    for (const [term, tf] of counts) sum += ((1 + Math.log(tf)) * idf(term)) ** 2;
    return Math.sqrt(sum);
  });
  return {
    name,
    scope,
    search({ query, limit }) {
      const dot = new Map<number, number>();
      let queryNorm = 0;
      for (const [term, tf] of count(query)) {
        const list = postings.get(term);
        if (list === undefined) continue;
        const weight = (1 + Math.log(tf)) * idf(term);
        queryNorm += weight ** 2;
        for (const [doc, dtf] of list) {
          dot.set(doc, (dot.get(doc) ?? 0) + weight * (1 + Math.log(dtf)) * idf(term));
        }
      }
      const ranked = [...dot]
        .map(([doc, sum]) => ({ doc, score: sum / ((norms[doc] || 1) * Math.sqrt(queryNorm)) }))
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
