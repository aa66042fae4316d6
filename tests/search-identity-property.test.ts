/**
 * The search identity's canonical JSON (src/gateway/search-identity.ts), held to its properties:
 * equal values give equal text whatever their key order, different values different text, the text
 * is RFC 8785's (checked against `canonicalize` 4.0.0) for every value RFC 8785 accepts, and an
 * identity is made for every caller a token admits, a claim with a lone surrogate included, where
 * `canonicalize` throws (docs/decisions.md, "Search identities").
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import canonicalize from "canonicalize";
import { canonicalJson, searchIdentity } from "../src/gateway/search-identity.ts";
import type { SearchRequest } from "../src/protocol/search-request.ts";
import type { ProviderSpec } from "../src/protocol/manifest-schema.ts";

/** JSON values whose strings hold any UTF-16 code unit pairs as text holds them: no lone surrogate. */
const json = fc.jsonValue({ maxDepth: 4, stringUnit: "grapheme" });

/** The same value with every object's keys in reverse order. */
function reordered(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reordered);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).reverse().map(([k, v]) => [k, reordered(v)]),
    );
  }
  return value;
}

const REQUEST: SearchRequest = {
  query: "q",
  scope: null,
  providers: null,
  limit: 8,
  tier: null,
  view: "full",
  timeout_ms: 10_000,
};

describe("search identity: canonical JSON", () => {
  it("is RFC 8785's text for every JSON value without a lone surrogate", () => {
    fc.assert(fc.property(json, (value) => canonicalJson(value) === canonicalize(value)), {
      numRuns: 500,
    });
  });

  it("equal values give equal text whatever their key order; different values different text", () => {
    fc.assert(
      fc.property(json, json, (a, b) => {
        assert.equal(canonicalJson(reordered(a)), canonicalJson(a));
        const same = canonicalJson(a) === canonicalJson(b);
        assert.equal(same, canonicalJson(JSON.parse(canonicalJson(a))) === canonicalJson(b));
        if (same) assert.deepEqual(JSON.parse(canonicalJson(a)), JSON.parse(canonicalJson(b)));
      }),
      { numRuns: 500 },
    );
  });

  it("an identity is made for a token whose claims hold a lone surrogate, where canonicalize throws", () => {
    const caller = { kind: "token" as const, subject: "user-\ud800", scopes: new Set(["a\udc00"]) };
    const personal = [{ auth: { type: "gateway-token" }, sensitivity: "public" }] as ProviderSpec[];
    const identity = searchIdentity(REQUEST, caller, personal);
    assert.ok(identity.includes('"sub":"user-\\ud800"'), identity);
    assert.notEqual(
      identity,
      searchIdentity(REQUEST, { ...caller, subject: "user-\ud801" }, personal),
    );
    assert.throws(() => canonicalize({ sub: caller.subject }), /Lone surrogate/);
  });
});
