/**
 * How text becomes terms, for the corpus provider's index and the passages of a fetched page alike,
 * and which query terms may match by prefix. The figures behind each choice are in
 * docs/quality.md; the reasons are beside each constant.
 */
import { stemmer } from "stemmer";

/**
 * English function words that say nothing about a page's subject. Removing them was worth +0.057
 * nDCG@10 on Cranfield and +0.063 on CISI: left in, "of" and "the" match nearly every document and
 * their small scores still reorder the list. The list is short common words only; a subject word
 * ("flow", "library") never belongs here.
 */
const STOPWORDS: ReadonlySet<string> = new Set(
  (
    "a about above after again against all also am an and any are as at be because been before " +
    "being below between both but by can could did do does doing down during each etc few for " +
    "from further had has have having he her here hers herself him himself his how i if in into " +
    "is it its itself just may me might more most must my myself no nor not now of on one only or " +
    "other our ours ourselves out over own same shall she should so some such than that the their " +
    "theirs them themselves then there these they this those three through to too two under until " +
    "up very was we were what when where which while who whom why will with would you your yours " +
    "yourself yourselves"
  ).split(" "),
);

/**
 * A query of at most this many terms may be a prefix of what the user is still typing ("rate
 * lim"); a longer one is a question, where expanding any term only adds noise (every Cranfield
 * query matched 1,383 of 1,400 documents with every term expanded).
 */
const PREFIX_MAX_QUERY_TERMS = 3;

/** Shorter terms never expand: "s" of "Bradford's" would match every word starting with s. */
const PREFIX_MIN_TERM_CHARS = 3;

/** Runs of letters and digits, with `_` joining them into one identifier (`exit_code`). */
const WORD = /[\p{L}\p{N}]+(?:_+[\p{L}\p{N}]+)*/gu;

/**
 * The words of `text`, lowercased. An identifier joined by underscores is kept whole and also
 * yields its parts, so `exit_code` is found by `exit_code` and by `exit code`.
 */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  for (const match of text.matchAll(WORD)) {
    const word = match[0];
    out.push(word);
    if (word.includes("_")) {
      for (const part of word.split(/_+/)) out.push(part);
    }
  }
  return out;
}

/** A token as indexed and searched: lowercased, or dropped when it is a stopword. */
export function processTerm(term: string): string | null {
  const lower = term.toLowerCase();
  return STOPWORDS.has(lower) ? null : lower;
}

/**
 * Stems remembered at once: a corpus's vocabulary is tens of thousands of words, and the Porter
 * stemmer's regular expressions cost more than a lookup; past this the memory is started afresh, so
 * a provider that reloads a changing corpus for months holds no more.
 */
const STEM_CACHE_ENTRIES = 100_000;
const stems = new Map<string, string>();

/** Only plain lowercase English words are stemmed: Porter's rules know no other letters. */
const ENGLISH_WORD = /^[a-z]+$/;

/**
 * The Porter stem of an English word ("aerodynamics" and "aerodynamic" are both "aerodynam"); an
 * identifier (`exit_code`), a word with digits or with letters Porter's rules do not know stays as
 * it is, so it is found only as written.
 */
export function stem(term: string): string {
  if (!ENGLISH_WORD.test(term)) return term;
  let stemmed = stems.get(term);
  if (stemmed === undefined) {
    if (stems.size >= STEM_CACHE_ENTRIES) stems.clear();
    stemmed = stemmer(term);
    stems.set(term, stemmed);
  }
  return stemmed;
}

/**
 * The indexed terms of `text`, in order, repeats kept: its words lowercased, stopwords dropped,
 * identifiers whole and in parts, and each English word stemmed unless `stemming` is off.
 */
export function termsOf(text: string, stemming: boolean): string[] {
  const out: string[] = [];
  for (const token of tokenize(text)) {
    const term = processTerm(token);
    if (term !== null) out.push(stemming ? stem(term) : term);
  }
  return out;
}

/** Whether the `i`th of a query's `terms` (after stopwords) may match as a prefix. */
export function expandsByPrefix(term: string, i: number, terms: readonly string[]): boolean {
  return terms.length <= PREFIX_MAX_QUERY_TERMS && i === terms.length - 1 &&
    term.length >= PREFIX_MIN_TERM_CHARS;
}
