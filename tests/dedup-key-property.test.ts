import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { dedupKey, keyByUrl } from "../src/core/dedup-key.ts";

/** The dedupe rule of docs/decisions.md, every http(s) locator read by URL. */
function reference(locator: string): string {
  return /^https?:\/\//i.test(locator) ? keyByUrl(locator) : `exact:${locator}`;
}

/** Pieces that each hit one rule of the parser: case, IPs, punycode, ports, dots, escapes. */
const host = fc.constantFrom(
  "example.org",
  "WWW.Example.ORG",
  "www.a-b.io",
  "xn--nxasmq6b.com",
  "XN--abc.org",
  "127.0.0.1",
  "0x7f.1",
  "a.1",
  "1password.com",
  "-a.org",
  "a..b",
  "a.b.",
  "localhost",
  "user@host.org",
  "[::1]",
  "ex ample.org",
  "exa%41mple.org",
);
const port = fc.constantFrom("", ":", ":80", ":443", ":080", ":8443", ":0", ":65535", ":65536");
const segment = fc.constantFrom(
  "a",
  "B",
  "",
  ".",
  "..",
  "%2e",
  "%2E%2e",
  ".well-known",
  "a.b",
  "x y",
  "é",
  "a'b",
  "a|b",
  "a\\b",
  "~user",
  "(x)",
  "a;b=c",
  "%41",
  "a\tb",
);
const query = fc.constantFrom("", "?", "?a=1", "?a=1&b=2", "?x='y'", "?q=a b", "?a=%zz", "??a");
const tail = fc.constantFrom("", "/", "#frag", "#", "?a#b", " ");

const locator = fc.tuple(
  fc.constantFrom("http://", "https://", "HTTPS://", "Http://"),
  host,
  port,
  fc.array(segment, { maxLength: 4 }),
  query,
  tail,
).map(([scheme, h, p, segments, q, t]) =>
  `${scheme}${h}${p}${segments.map((s) => `/${s}`).join("")}${q}${t}`
);

describe("property: dedupKey", () => {
  it("gives what reading every locator with URL gives, for the locators it reads by pattern too", () => {
    fc.assert(
      fc.property(locator, (value) => {
        assert.equal(dedupKey(value), reference(value), value);
      }),
      { numRuns: 5_000 },
    );
  });
});
