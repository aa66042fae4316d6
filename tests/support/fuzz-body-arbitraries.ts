/**
 * The generator of a provider answer's body: a v1 answer (candidates with edge-length texts,
 * long or duplicate locators, metadata with secret, prototype and over-long keys, nesting and
 * padding past every bound), the same answer with another identity or broken by one schema
 * mutation, a provider-error body, text that is not JSON, bytes that are not UTF-8, nothing, or a
 * body around the size cap.
 */
import fc from "fast-check";
import { PROVIDER_ERROR_CODES } from "../../src/protocol/codes.ts";
import {
  MAX_METADATA_ARRAY_ITEMS,
  MAX_METADATA_KEY_CHARS,
  MAX_METADATA_KEYS,
  MAX_PROVIDER_BODY_BYTES,
  MAX_PROVIDER_WAIT_MS,
  MAX_WARNINGS,
} from "../../src/protocol/limits.ts";
import { HEALTHY } from "./outcomes.ts";
import {
  type BodySpec,
  FUZZED,
  type Json,
  type Mutation,
  type WireCandidateSpec,
} from "./fuzz-answer.ts";
import {
  anyText,
  longText,
  pick,
  plantedSecret,
  secretText,
  shortText,
} from "./fuzz-text-arbitraries.ts";

const locator = pick(
  {
    weight: 8,
    arbitrary: fc.stringMatching(/^[a-z0-9/._-]{0,30}$/).map((p) => `https://f.example/${p}`),
  },
  {
    weight: 1,
    // Around the 2,000 code point bound, in ASCII and in astral characters.
    arbitrary: fc
      .tuple(fc.constantFrom("p", "𝒳"), fc.integer({ min: 1_990, max: 2_010 }))
      .map(([unit, n]) => "https://f.example/" + unit.repeat(n - 18)),
  },
  { weight: 1, arbitrary: fc.constant(HEALTHY.locator) },
);

const metadataKey = pick(
  { weight: 8, arbitrary: fc.stringMatching(/^[a-z_]{1,12}$/) },
  { weight: 1, arbitrary: fc.constantFrom("__proto__", "constructor", "prototype") },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "api_key",
      "password",
      "Authorization",
      "session_id",
      "private-key",
      "cookie",
      "accessToken",
      "client_secret",
    ),
  },
  { weight: 1, arbitrary: fc.constant("k".repeat(MAX_METADATA_KEY_CHARS + 1)) },
);

const leaf: fc.Arbitrary<Json> = pick(
  { weight: 4, arbitrary: anyText },
  { weight: 2, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.double() },
  { weight: 1, arbitrary: fc.constantFrom<Json>(null, true, false) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom("1e400", "-1e400", "-0", "1e308", "0.1e-400", "123456789012345678901234567890")
      .map((raw): Json => ({ raw })),
  },
);
const deep: fc.Arbitrary<Json> = pick(
  leaf,
  fc.array(leaf, { maxLength: 3 }),
  fc.array(fc.tuple(metadataKey, leaf), { maxLength: 3 }).map((obj): Json => ({ obj })),
);
const nested: fc.Arbitrary<Json> = pick(
  fc.array(pick({ weight: 5, arbitrary: leaf }, { weight: 1, arbitrary: deep }), {
    maxLength: MAX_METADATA_ARRAY_ITEMS + 5,
  }),
  fc.array(fc.tuple(metadataKey, pick(leaf, deep)), { maxLength: MAX_METADATA_KEYS + 3 }).map((
    obj,
  ): Json => ({ obj })),
);
const metadataEntry = fc.tuple(
  metadataKey,
  pick({ weight: 4, arbitrary: leaf }, { weight: 1, arbitrary: nested }),
);
/**
 * Mostly none, sometimes up to `max`: the filler that pushes a list past its bound. A separate
 * count, not a long generated list, so a counterexample sheds the filler and keeps what mattered.
 */
const padding = (max: number) =>
  pick({ weight: 6, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.nat(max) });

const metadata = fc
  .tuple(padding(MAX_METADATA_KEYS + 8), fc.array(metadataEntry, { maxLength: 6 }))
  .map(([n, entries]) => [
    ...Array.from({ length: n }, (_, i): [string, Json] => [`pad${i}`, i]),
    ...entries,
  ]);

const nullableText = (text: fc.Arbitrary<string>) =>
  pick({ weight: 3, arbitrary: text }, { weight: 1, arbitrary: fc.constant(null) });

const candidate: fc.Arbitrary<WireCandidateSpec> = fc.record(
  {
    title: anyText,
    locator,
    snippet: nullableText(anyText),
    published_at: nullableText(pick(shortText, longText, fc.constant("2025-01-01"))),
    metadata,
  },
  { requiredKeys: ["title", "locator"] },
);

const KNOWN_FIELDS = new Set([
  "schema_version",
  "provider",
  "scope",
  "candidates",
  "warnings",
  "title",
  "locator",
  "snippet",
  "published_at",
  "metadata",
]);
const unknownName = fc
  .oneof(
    fc.constantFrom("score", "next_page", "Title", "__proto__", "constructor"),
    plantedSecret,
    secretText,
  )
  .filter((name) => !KNOWN_FIELDS.has(name));

const mutation: fc.Arbitrary<Mutation> = pick(
  fc.record({
    m: fc.constant("unknown-field" as const),
    at: fc.constantFrom("top" as const, "candidate" as const),
    name: unknownName,
  }),
  fc.constantFrom<Mutation>(
    { m: "missing-candidates" },
    { m: "candidates-object" },
    { m: "title-number" },
    { m: "locator-empty" },
    { m: "metadata-array" },
    { m: "metadata-string" },
    { m: "warnings-numbers" },
    { m: "body-null" },
    { m: "body-array" },
  ),
  fc.record({
    m: fc.constant("wrong-version" as const),
    value: fc.constantFrom("tracefetch.provider-response.v2", "", "tracefetch.provider-error.v1"),
  }),
);

const identity = fc.record({
  field: fc.constantFrom("provider" as const, "scope" as const, "both" as const),
  value: fc
    .oneof(fc.constantFrom("someone-else", "FUZZED", "fuzzed ", "", "healthy"), secretText)
    .filter((v) => v !== FUZZED),
});

const answerBody = fc.record(
  {
    kind: fc.constant("answer" as const),
    candidates: fc
      .tuple(fc.array(candidate, { maxLength: 6 }), padding(120))
      .map(([candidates, n]) => [
        ...candidates,
        ...Array.from({ length: n }, (_, i) => ({
          title: `many ${i}`,
          locator: `https://many.example/${i}`,
        })),
      ]),
    warnings: fc
      .tuple(padding(MAX_WARNINGS + 5), fc.array(anyText, { maxLength: 3 }))
      .map(([n, warnings]) => [...Array.from({ length: n }, () => "w"), ...warnings]),
  },
  { requiredKeys: ["kind", "candidates"] },
);

const errorBody = fc.record(
  {
    kind: fc.constant("error" as const),
    version: pick(
      { weight: 6, arbitrary: fc.constant("tracefetch.provider-error.v1") },
      { weight: 1, arbitrary: fc.constant("other.v1") },
    ),
    code: fc.constantFrom(...PROVIDER_ERROR_CODES, "teapot"),
    message: anyText,
    retry_after_ms: fc.constantFrom<Json>(
      0,
      1_500,
      MAX_PROVIDER_WAIT_MS,
      MAX_PROVIDER_WAIT_MS + 1,
      1e308,
      -1,
      "x",
      1.5,
      2 ** 53,
      null,
    ),
    retryable: fc.constantFrom<Json>(false, true, "no", 0, null),
  },
  { requiredKeys: ["kind", "version", "code"] },
);

const INVALID_JSON = ["<html>", " ", "{", "nul", "[1,]", "{'a':1}", "NaN", '{"a":1}}', "\u0000"];

export const bodySpec: fc.Arbitrary<BodySpec> = pick<BodySpec>(
  { weight: 45, arbitrary: answerBody },
  {
    weight: 5,
    arbitrary: fc
      .tuple(answerBody, identity)
      .map(([body, id]): BodySpec => ({ ...body, identity: id })),
  },
  {
    weight: 8,
    arbitrary: fc
      .tuple(answerBody, mutation)
      .map(([body, m]): BodySpec => ({ ...body, mutation: m })),
  },
  { weight: 12, arbitrary: errorBody },
  {
    weight: 5,
    arbitrary: pick(
      fc.constantFrom(...INVALID_JSON),
      // A strict prefix of an answer is never JSON.
      fc.nat(60).map((n) =>
        `{"schema_version":"tracefetch.provider-response.v1","provider":"fuzzed"`.slice(0, n)
      ),
      shortText.map((t) => `<${t}`),
    ).map((text): BodySpec => ({ kind: "invalid-json", text })),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("invalid-utf8" as const),
      bytes: fc.constantFrom<number[]>([0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82], [
        0xfe,
        0xfe,
      ]),
      at: fc.nat(1_000),
    }),
  },
  { weight: 2, arbitrary: fc.constant<BodySpec>({ kind: "empty" }) },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom(MAX_PROVIDER_BODY_BYTES, MAX_PROVIDER_BODY_BYTES + 1, 2_500_000)
      .map((bytes): BodySpec => ({ kind: "huge", bytes })),
  },
);
