import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { requestHeaders } from "../src/runtime/node-exchange.ts";

/** What fetch would send: every record read through Headers, gzip asked unless given. */
function throughHeaders(init: Record<string, string>): Record<string, string> {
  const headers = new Headers(init);
  if (!headers.has("accept-encoding")) headers.set("accept-encoding", "gzip, deflate, br");
  return Object.fromEntries(headers);
}

/** Names and values that each hit one of Headers' rules: case, tokens, whitespace, controls, bytes. */
const name = fc.constantFrom(
  "content-type",
  "Content-Type",
  "accept-encoding",
  "Accept-Encoding",
  "x-request-id",
  "traceparent",
  "authorization",
  "x_under",
  "a b",
  "é",
  "",
  "x:y",
);
const value = fc.oneof(
  fc.constantFrom(
    "application/json",
    "Bearer abc.def",
    " padded ",
    "\ttab",
    "inner\ttab ok",
    "line\nbreak",
    "cr\r",
    "nul\0",
    "latin é",
    "euro €",
    "",
    "identity",
  ),
  fc.string({ maxLength: 12 }),
);

function outcome(read: () => Record<string, string>): Record<string, string> | "refused" {
  try {
    const out = read();
    // Headers sorts its names; what is sent is the same set of names and values in any order.
    return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : 1)));
  } catch (error) {
    assert.ok(error instanceof TypeError, String(error));
    return "refused";
  }
}

describe("requestHeaders on Node", () => {
  it("sends what Headers would, for every record (the plain record's fast path included)", () => {
    fc.assert(
      fc.property(fc.dictionary(name, value, { maxKeys: 6 }), (init) => {
        assert.deepEqual(
          outcome(() => requestHeaders(init)),
          outcome(() => throughHeaders(init)),
        );
      }),
      { numRuns: 2_000 },
    );
  });

  it("keeps a given accept-encoding and asks for gzip otherwise", () => {
    assert.equal(requestHeaders({ "accept-encoding": "identity" })["accept-encoding"], "identity");
    assert.equal(requestHeaders({ accept: "a/b" })["accept-encoding"], "gzip, deflate, br");
    assert.equal(requestHeaders(undefined)["accept-encoding"], "gzip, deflate, br");
  });
});
