/**
 * Character n-gram TF-IDF with cosine similarity over title and text: a method that matches parts
 * of words (a stem, a compound's half, a misspelling), for the `methods` setups of `npm run eval`.
 * Each word of the corpus provider's terms (src/core/terms/text-terms.ts, unstemmed), padded with a space on
 * either side, gives its 3- and 4-character grams, scored by tfidf-adapter.ts's cosine.
 */
import type { CorpusDocument } from "../../providers/corpus/corpus-adapter.ts";
import { processTerm, tokenize } from "../../src/core/terms/text-terms.ts";
import type { SearchAdapter } from "../../src/kit/mod.ts";
import { cosineAdapter } from "./tfidf-adapter.ts";

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
  return cosineAdapter(name, scope, documents, gramCounts);
}
