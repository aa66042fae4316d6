/**
 * Every wire limit is a named constant in src/protocol/limits.ts, with its reason: no schema under
 * src/protocol writes a bound as a number of its own.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { MAX_BINDING_CHARS, MAX_NAME_CHARS } from "../src/protocol/limits.ts";
import { BINDING_PATTERN, NAME_PATTERN } from "../src/protocol/manifest-schema.ts";

const PROTOCOL = fileURLToPath(new URL("../src/protocol/", import.meta.url));

/** The wire schemas, each named: a file that is renamed must be renamed here too. */
const WIRE_SCHEMAS = [
  "envelope-schema.ts",
  "manifest-schema.ts",
  "provider-wire.ts",
  "search-request.ts",
];

/** A valibot size or value action, and its first argument as written. */
const BOUND_CALL =
  /\bv\.((?:max|min)(?:Length|Value|Size|Entries|Bytes|Graphemes|Words)|length|size)\(\s*([^,)]*)/g;

/** A regular expression's bounded repetition (`{0,63}`): a length limit written in the pattern. */
const BOUNDED_REPEAT = /\{\d+,\d+\}/;

/**
 * `file:line: text` for every bound written as a number. A minimum of 0 or 1 (`minValue(0)`,
 * `minLength(1)`) says "not negative" or "not empty", which no reason could change; any other
 * number, and any maximum, is a limit and belongs in limits.ts.
 */
function literalBounds(file: string, text: string): string[] {
  return text.split("\n").flatMap((line, i) => {
    if (/^\s*(?:\/\/|\*|\/\*)/.test(line)) return [];
    const literal = [...line.matchAll(BOUND_CALL)].some(([, action, argument]) => {
      const value = (argument ?? "").trim();
      if (!/^-?\d/.test(value)) return false;
      return !(action?.startsWith("min") && (value === "0" || value === "1"));
    });
    return literal || BOUNDED_REPEAT.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [];
  });
}

describe("wire limits", () => {
  it("no wire schema under src/protocol writes a bound as a number literal", () => {
    const valibotFiles = readdirSync(PROTOCOL)
      .filter((name) => name.endsWith(".ts") && name !== "limits.ts")
      .filter((name) => readFileSync(join(PROTOCOL, name), "utf8").includes('from "valibot"'));
    for (const name of WIRE_SCHEMAS) assert.ok(valibotFiles.includes(name), `${name} is scanned`);
    const found = valibotFiles.flatMap((name) =>
      literalBounds(`src/protocol/${name}`, readFileSync(join(PROTOCOL, name), "utf8"))
    );
    assert.deepEqual(found, [], "name these in src/protocol/limits.ts, with the reason");
  });

  it("the scan catches a limit written in a schema, and leaves named bounds and floors alone", () => {
    const caught = [
      "  query: v.pipe(v.string(), v.maxLength(2_000)),",
      "  weight: v.pipe(v.number(), v.maxValue(1_000)),",
      "  tier: v.pipe(v.string(), v.minLength(3)),",
      "  keys: v.pipe(v.array(v.string()), v.maxSize(64)),",
      "export const NAME = /^[a-z][a-z0-9_-]{0,63}$/;",
    ];
    const quiet = [
      "  query: v.pipe(v.string(), v.minLength(1), v.maxLength(MAX_QUERY_CHARS)),",
      "  rank: v.pipe(Int, v.minValue(1)),",
      "  cost_micros: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0)), 0),",
      "  // v.maxLength(2_000) in a comment",
      "const HEX = /[0-9a-f]{4}/;",
    ];
    assert.deepEqual(
      literalBounds("x.ts", [...caught, ...quiet].join("\n")),
      caught.map((line, i) => `x.ts:${i + 1}: ${line.trim()}`),
    );
  });

  it("manifest names and binding names are as long as their limits allow, and no longer", () => {
    assert.equal(NAME_PATTERN.test(`a${"b".repeat(MAX_NAME_CHARS - 1)}`), true);
    assert.equal(NAME_PATTERN.test(`a${"b".repeat(MAX_NAME_CHARS)}`), false);
    assert.equal(BINDING_PATTERN.test("A".repeat(MAX_BINDING_CHARS)), true);
    assert.equal(BINDING_PATTERN.test("A".repeat(MAX_BINDING_CHARS + 1)), false);
  });
});
