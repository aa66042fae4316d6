/**
 * The corpus provider finds word forms and ranks by a sum over terms: English words are stemmed
 * ("aerodynamic" finds "aerodynamics") unless stemming is off, stopwords never match, identifiers
 * stay whole, only a short query's last term expands by prefix, and a score is the sum over terms,
 * not multiplied by them.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  corpusAdapter,
  type CorpusDocument,
  type CorpusOptions,
} from "../providers/corpus/corpus-adapter.ts";
import { expandsByPrefix, processTerm, tokenize } from "../src/core/terms/text-terms.ts";

const signal = new AbortController().signal;

async function locators(
  documents: CorpusDocument[],
  query: string,
  options: CorpusOptions = {},
): Promise<string[]> {
  const adapter = corpusAdapter("c", "local", documents, options);
  const answer = await adapter.search({ query, limit: 10 }, signal);
  return answer.candidates.map((c) => c.locator);
}

const doc = (locator: string, text: string, title = locator): CorpusDocument => ({
  title,
  locator,
  text,
});

describe("corpus terms", () => {
  it("keeps an identifier whole and also yields its parts", () => {
    assert.deepEqual(tokenize("Read exit_code, now"), ["Read", "exit_code", "exit", "code", "now"]);
  });

  it("drops stopwords and lowercases the rest", () => {
    assert.equal(processTerm("The"), null);
    assert.equal(processTerm("of"), null);
    assert.equal(processTerm("Flow"), "flow");
  });

  it("expands only the last term of a short query, and never a term under 3 characters", () => {
    assert.equal(expandsByPrefix("lim", 1, ["rate", "lim"]), true);
    assert.equal(expandsByPrefix("rate", 0, ["rate", "lim"]), false);
    assert.equal(expandsByPrefix("li", 1, ["rate", "li"]), false);
    assert.equal(expandsByPrefix("dd", 3, ["aa", "bb", "cc", "ddd"]), false);
  });
});

describe("corpus ranking", () => {
  it("finds exit_code by `exit code` and by `exit_code`", async () => {
    const docs = [doc("a", "the process sets exit_code to 2"), doc("b", "nothing here at all")];
    assert.deepEqual(await locators(docs, "exit code"), ["a"]);
    assert.deepEqual(await locators(docs, "exit_code"), ["a"]);
  });

  it("finds `exit code` written apart by `exit_code`, after the page that writes exit_code", async () => {
    const docs = [
      doc("apart", "the exit code of a process, and its exit status"),
      doc("joined", "the process sets exit_code to 2"),
      doc("other", "nothing here at all"),
    ];
    assert.deepEqual(await locators(docs, "exit_code"), ["joined", "apart"]);
  });

  it("finds a page that says only `aerodynamics` by `aerodynamic`, as the embedded default ranks", async () => {
    const docs = [
      doc("plural", "lift and drag in supersonic aerodynamics", "Wing theory"),
      doc("other", "heat transfer in a boundary layer", "Heat"),
    ];
    assert.deepEqual(await locators(docs, "aerodynamic"), ["plural"]);
    // A longer query expands no word by prefix: the stem alone finds the plural.
    assert.deepEqual(await locators(docs, "aerodynamic lift of a wing"), ["plural"]);
  });

  it("with stemming off, finds a word only as written (or as the prefix of a short query)", async () => {
    const docs = [doc("plural", "case studies of wings"), doc("other", "heat transfer")];
    assert.deepEqual(await locators(docs, "study"), ["plural"]);
    assert.deepEqual(await locators(docs, "study", { stemming: false }), []);
    assert.deepEqual(await locators(docs, "studies", { stemming: false }), ["plural"]);
  });

  it("never matches on a stopword alone", async () => {
    const docs = [doc("a", "the theory of the flow"), doc("b", "of the and a")];
    assert.deepEqual(await locators(docs, "the of"), []);
    assert.deepEqual(await locators(docs, "theory of the"), ["a"]);
  });

  it("matches a prefix for the last term of a short query only", async () => {
    const docs = [doc("a", "rate limiting explained"), doc("b", "the limit of a function")];
    assert.deepEqual((await locators(docs, "rate lim")).sort(), ["a", "b"]);
    assert.deepEqual(await locators(docs, "pages saying something about lim works"), []);
  });

  it("does not multiply a score by the number of terms matched", async () => {
    // `zeta` is rare (one document) and `common` is in every document but one. Summed BM25 ranks
    // the document with the rare term first; multiplying by matched terms (2 against 1) would
    // put the one that matched both weak terms first.
    const docs = [
      doc("rare", "zeta"),
      doc("both", "common alpha"),
      ...Array.from({ length: 20 }, (_, i) => doc(`filler${i}`, `common filler word${i}`)),
    ];
    const ranked = await locators(docs, "zeta common");
    assert.equal(ranked[0], "rare");
  });

  it("sends the unrounded score, so shards of one index can be merged by it", async () => {
    const adapter = corpusAdapter("c", "local", [doc("a", "alpha beta gamma delta")]);
    const answer = await adapter.search({ query: "alpha", limit: 1 }, signal);
    const score = answer.candidates[0]?.metadata?.score as number;
    assert.ok(score > 0);
    assert.notEqual(score, Math.round(score * 1000) / 1000);
  });
});
