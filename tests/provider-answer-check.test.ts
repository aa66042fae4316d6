import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import * as v from "valibot";
import { checkProviderAnswer } from "../src/protocol/check-provider-answer.ts";
import { ProviderResponseSchema } from "../src/protocol/provider-wire.ts";

/** JSON text of one field's value: right types, wrong types, and the edge of each rule. */
const value = fc.constantFrom(
  '"t"',
  '""',
  "null",
  "1",
  "true",
  "[]",
  '["a"]',
  "{}",
  '{"a":1}',
  '{"__proto__":{"x":1}}',
  '{"constructor":"c"}',
  '{"prototype":1,"b":2}',
  '{"k":[1,{"z":null}]}',
);
const candidateKey = fc.constantFrom(
  "title",
  "locator",
  "snippet",
  "published_at",
  "metadata",
  "score",
  "__proto__",
);
/** A candidate as JSON text: mostly valid, sometimes with a wrong or unknown field, or not one. */
const candidate = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      title: fc.constantFrom('"a title"', '"a title"', '""', "1"),
      locator: fc.constantFrom('"https://a.org/x"', '"https://a.org/x"', '""', "null"),
      extra: fc.array(fc.tuple(candidateKey, value), { maxLength: 2 }),
    }).map(({ title, locator, extra }) =>
      `{"title":${title},"locator":${locator}${
        extra.map(([k, x]) => `,${JSON.stringify(k)}:${x}`).join("")
      }}`
    ),
  },
  { weight: 1, arbitrary: value },
);
const answerKey = fc.constantFrom("warnings", "provider", "extra", "__proto__", "candidates");
const answerText = fc.record({
  version: fc.constantFrom(
    '"tracefetch.provider-response.v1"',
    '"tracefetch.provider-response.v1"',
    '"tracefetch.provider-response.v2"',
  ),
  provider: fc.constantFrom('"p"', '"p"', "1"),
  candidates: fc.oneof(
    {
      weight: 6,
      arbitrary: fc.array(candidate, { maxLength: 3 }).map((cs) => `[${cs.join(",")}]`),
    },
    { weight: 1, arbitrary: value },
  ),
  extra: fc.oneof(
    { weight: 3, arbitrary: fc.constant<Array<[string, string]>>([]) },
    {
      weight: 1,
      arbitrary: fc.array(
        fc.tuple(answerKey, fc.oneof(value, fc.constantFrom('["w"]', '["w",1]'))),
        { maxLength: 2 },
      ),
    },
  ),
}).map(({ version, provider, candidates, extra }) =>
  `{"schema_version":${version},"provider":${provider},"scope":"s","candidates":${candidates}${
    (extra as Array<[string, string]>).map(([k, x]) => `,${JSON.stringify(k)}:${x}`).join("")
  }}`
);

describe("property: checking a provider's answer", () => {
  it("accepts exactly what the schema accepts, and hands on what the schema gives back", () => {
    fc.assert(
      fc.property(answerText, (text) => {
        const parsed = v.safeParse(ProviderResponseSchema, JSON.parse(text));
        const checked = checkProviderAnswer(text, null);
        assert.equal(checked.ok, parsed.success, text);
        if (checked.ok && parsed.success) {
          // Key order aside (the schema writes its own): the same answer, field for field.
          assert.deepEqual(
            JSON.parse(JSON.stringify(checked.answer)),
            JSON.parse(JSON.stringify(parsed.output)),
            text,
          );
        } else if (!checked.ok && !parsed.success) {
          assert.equal(checked.code, "schema_violation", text);
        }
      }),
      { numRuns: 5_000 },
    );
  });
});
