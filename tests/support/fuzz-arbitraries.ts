/**
 * `fuzzAnswer`, the generator of one whole provider answer: interim and final statuses, HTTP/1.0,
 * content type, content encoding (encoded, mislabelled, corrupt, a bomb), framing (length, chunked,
 * close, and malformed variants), extra headers with secrets and Retry-After values, write splits
 * and an ending (complete, closed, reset or hanging part-way). The body comes from
 * fuzz-body-arbitraries.ts.
 */
import fc from "fast-check";
import {
  type Codec,
  type EncodingSpec,
  type EndingSpec,
  type FramingSpec,
  type FuzzAnswer,
  JSON_TYPES,
} from "./fuzz-answer.ts";
import { bodySpec } from "./fuzz-body-arbitraries.ts";
import { GHP_TOKEN, JWT, PEM } from "./fuzz-secrets.ts";
import { pick } from "./fuzz-text-arbitraries.ts";

const codec = fc.constantFrom<Codec>("gzip", "deflate", "br");
const encodingSpec: fc.Arbitrary<EncodingSpec> = pick(
  { weight: 30, arbitrary: fc.constant<EncodingSpec>({ kind: "none" }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("label" as const),
      label: fc.constantFrom("identity" as const, "x-fuzz" as const),
    }),
  },
  { weight: 8, arbitrary: fc.record({ kind: fc.constant("encoded" as const), codec }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("mislabelled" as const), codec }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("corrupt" as const),
      codec,
      keep: fc.integer({ min: 0, max: 999 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("bomb" as const),
      codec: fc.constantFrom("gzip" as const, "br" as const),
    }),
  },
);

const framingSpec: fc.Arbitrary<FramingSpec> = pick(
  { weight: 20, arbitrary: fc.constant<FramingSpec>({ kind: "length" }) },
  { weight: 10, arbitrary: fc.constant<FramingSpec>({ kind: "chunked" }) },
  { weight: 6, arbitrary: fc.constant<FramingSpec>({ kind: "close" }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constantFrom("length-long" as const, "length-short" as const),
      by: fc.integer({ min: 1, max: 100 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom<FramingSpec>(
      { kind: "two-lengths" },
      { kind: "length-and-chunked" },
      { kind: "chunk-bad-hex" },
      { kind: "chunk-no-terminator" },
      { kind: "chunk-size-too-big" },
      { kind: "chunk-missing-crlf" },
      { kind: "header-without-colon" },
    ),
  },
);

const endingSpec: fc.Arbitrary<EndingSpec> = pick(
  { weight: 40, arbitrary: fc.constant<EndingSpec>({ kind: "end" }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constantFrom("close-at" as const, "reset-at" as const),
      at: fc.integer({ min: 0, max: 999 }),
    }),
  },
  // Each hang costs a HANG_DEADLINE_MS wait: rare enough to keep throughput, common enough to matter.
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("hang-at" as const),
      at: fc.integer({ min: 0, max: 999 }),
    }),
  },
);

const finalStatus = pick(
  { weight: 50, arbitrary: fc.constant(200) },
  { weight: 3, arbitrary: fc.integer({ min: 201, max: 299 }) },
  { weight: 2, arbitrary: fc.constantFrom(204, 205) },
  { weight: 4, arbitrary: fc.constantFrom(300, 301, 302, 303, 304, 307, 308, 399) },
  {
    weight: 12,
    arbitrary: fc.constantFrom(400, 401, 403, 404, 408, 429, 429, 500, 501, 502, 503, 503),
  },
  { weight: 4, arbitrary: fc.integer({ min: 400, max: 599 }) },
);

const OTHER_TYPES = [
  "text/html; charset=utf-8",
  "text/plain",
  "application/jsonp",
  "application/x-ndjson",
  "",
  `text/html; token=${GHP_TOKEN}`,
  "text/plain; Bearer s3cr3tZ",
  "application/xml; api_key=S3CRET",
  `text/x-${JWT}`,
];
const contentType = pick(
  { weight: 12, arbitrary: fc.constantFrom(...JSON_TYPES) },
  { weight: 2, arbitrary: fc.constantFrom<string | null>(null, ...OTHER_TYPES) },
);

const RETRY_AFTER = [
  "3",
  "0",
  "-1",
  "1.5",
  "3601",
  "99999999999999999999",
  "garbage",
  "Bearer s3cr3tZ",
  "Fri, 01 Jan 2100 00:00:00 GMT",
  "Wed, 21 Oct 2015 07:28:00 GMT",
];
const extraHeaders = fc
  .tuple(
    fc.option(fc.constantFrom(...RETRY_AFTER), { nil: null }),
    fc.subarray<[string, string]>([
      ["x-upstream-secret", GHP_TOKEN],
      ["set-cookie", "session=S3CRET"],
      ["www-authenticate", "Bearer s3cr3tZ"],
      ["x-debug", `${JWT} ${PEM.replace(/\n/g, " ")}`],
      ["link", "</style.css>; rel=preload"],
    ]),
  )
  .map(([retryAfter, rest]): Array<[string, string]> =>
    retryAfter === null ? rest : [["retry-after", retryAfter], ...rest]
  );

export const fuzzAnswer: fc.Arbitrary<FuzzAnswer> = fc.record({
  limit: pick(
    { weight: 6, arbitrary: fc.integer({ min: 2, max: 10 }) },
    { weight: 1, arbitrary: fc.constant(100) },
  ),
  interim: pick(
    { weight: 12, arbitrary: fc.constant<number[]>([]) },
    {
      weight: 1,
      arbitrary: fc.array(fc.constantFrom(100, 102, 103), { minLength: 1, maxLength: 2 }),
    },
  ),
  final: pick<number | "none">(
    { weight: 40, arbitrary: finalStatus },
    { weight: 1, arbitrary: fc.constant("none" as const) },
  ),
  http10: pick({ weight: 12, arbitrary: fc.constant(false) }, {
    weight: 1,
    arbitrary: fc.constant(true),
  }),
  contentType,
  encoding: encodingSpec,
  body: bodySpec,
  framing: framingSpec,
  headers: extraHeaders,
  splits: fc.array(fc.integer({ min: 1, max: 999 }), { maxLength: 4 }),
  ending: endingSpec,
});
