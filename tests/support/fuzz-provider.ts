/**
 * The provider-answer fuzz: fast-check generates whole HTTP answers of a provider (interim and
 * final statuses, headers, framing, content encodings, bodies, truncations, resets and hangs), a
 * raw node:net server plays each one byte for byte, and one search through a gateway with that
 * provider next to a healthy one must stay inside every promise of docs/protocol.md and
 * docs/envelope.md. Node, Deno and workerd share this generator, this server and these assertions.
 */
import assert from "node:assert/strict";
import { type AddressInfo, createServer, type Server, type Socket } from "node:net";
import { Buffer } from "node:buffer";
import { brotliCompressSync, constants as zlib, deflateSync, gzipSync } from "node:zlib";
import fc from "fast-check";
import { ATTEMPT_CODES, ATTEMPT_OUTCOMES, PROVIDER_ERROR_CODES } from "../../src/protocol/codes.ts";
import {
  MAX_DIAGNOSTIC_CHARS,
  MAX_LOCATOR_CHARS,
  MAX_METADATA_ARRAY_ITEMS,
  MAX_METADATA_DEPTH,
  MAX_METADATA_KEY_CHARS,
  MAX_METADATA_KEYS,
  MAX_METADATA_STRING_CHARS,
  MAX_PROVIDER_BODY_BYTES,
  MAX_PROVIDER_WAIT_MS,
  MAX_PUBLISHED_AT_CHARS,
  MAX_SNIPPET_CHARS,
  MAX_TITLE_CHARS,
  MAX_WARNING_CHARS,
  MAX_WARNINGS,
} from "../../src/protocol/limits.ts";
import { POISON_KEYS, SECRET_KEY } from "../../src/core/sanitize.ts";
import { MAX_ERROR_BODY_BYTES } from "../../src/transport/http-provider.ts";
import { validators } from "./gateway.ts";
import { HEALTHY } from "./outcomes.ts";

/** The fuzzed provider's name and scope, and the healthy provider's. */
export const FUZZED = "fuzzed";
export const HEALTHY_NAME = "healthy";

/** A search whose fuzzed provider hangs ends at this deadline, so a hang costs one short wait. */
export const HANG_DEADLINE_MS = 150;
/** Every other search's deadline: far above a loopback exchange, so only a real stall reaches it. */
export const DEADLINE_MS = 3_000;

/** A gzip bomb decodes to this many bytes: eight times the body cap. */
const BOMB_BYTES = 16 * 1024 * 1024;

// ---------------------------------------------------------------------------------------------
// Secrets: planted in every diagnostic field and in metadata; none may reach a caller.

const GHP_TOKEN = "ghp_" + "R7kP2mQ9xW4vL8nT3jH6bF1dS5gY0cZaEuIo";
const JWT_SIGNATURE = "Qm9ndXNTaWduYXR1cmVGdXp6NDcxMQ";
const JWT = `eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJmdXp6In0.${JWT_SIGNATURE}`;
const PEM_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDfuzzKEY4711";
const PEM = `-----BEGIN PRIVATE KEY-----\n${PEM_BODY}\n-----END PRIVATE KEY-----`;

/** Each planted text and the part of it that must never be shown. */
export const SECRETS: ReadonlyArray<{ planted: string; secret: string }> = [
  { planted: "Bearer s3cr3tZ", secret: "s3cr3tZ" },
  { planted: GHP_TOKEN, secret: GHP_TOKEN.slice(4) },
  { planted: "api_key=S3CRET", secret: "S3CRET" },
  { planted: JWT, secret: JWT_SIGNATURE },
  { planted: PEM, secret: PEM_BODY },
];

// ---------------------------------------------------------------------------------------------
// The generated answer: plain data, so a counterexample reads as what the provider sent.

/** A JSON value as written on the wire: objects keep duplicate and prototype keys, numbers may be raw text. */
export type Json =
  | null
  | boolean
  | number
  | string
  | Json[]
  | { obj: Array<[string, Json]> }
  | { raw: string };

export type WireCandidateSpec = {
  title: string;
  locator: string;
  snippet?: string | null;
  published_at?: string | null;
  metadata?: Array<[string, Json]>;
};

/** One way a well-formed answer breaks schema version 1. */
export type Mutation =
  | { m: "unknown-field"; at: "top" | "candidate"; name: string }
  | { m: "missing-candidates" }
  | { m: "candidates-object" }
  | { m: "wrong-version"; value: string }
  | { m: "title-number" }
  | { m: "locator-empty" }
  | { m: "metadata-array" }
  | { m: "metadata-string" }
  | { m: "warnings-numbers" }
  | { m: "body-null" }
  | { m: "body-array" };

export type BodySpec =
  | {
    kind: "answer";
    candidates: WireCandidateSpec[];
    warnings?: string[];
    /** Another provider or scope than the manifest declares. */
    identity?: { field: "provider" | "scope" | "both"; value: string };
    mutation?: Mutation;
  }
  | {
    kind: "error";
    version: string;
    code: string;
    message?: string;
    retry_after_ms?: Json;
  }
  | { kind: "invalid-json"; text: string }
  | { kind: "invalid-utf8"; bytes: number[]; at: number }
  | { kind: "empty" }
  | { kind: "huge"; bytes: number };

export type Codec = "gzip" | "deflate" | "br";

export type EncodingSpec =
  | { kind: "none" }
  /** A label no runtime decodes: the bytes pass through as they are. */
  | { kind: "label"; label: "identity" | "x-fuzz" }
  | { kind: "encoded"; codec: Codec }
  /** Labelled with a codec, sent as plain bytes. */
  | { kind: "mislabelled"; codec: Codec }
  /** Encoded, then cut short (permille of the encoded length): framing intact, the stream is not. */
  | { kind: "corrupt"; codec: Codec; keep: number }
  /** A body decoding to 16 MiB of zeros. */
  | { kind: "bomb"; codec: "gzip" | "br" };

export type FramingSpec =
  | { kind: "length" }
  | { kind: "chunked" }
  /** No length, no chunking: the body ends when the connection closes. */
  | { kind: "close" }
  | { kind: "length-long"; by: number }
  | { kind: "length-short"; by: number }
  | { kind: "two-lengths" }
  | { kind: "length-and-chunked" }
  | { kind: "chunk-bad-hex" }
  | { kind: "chunk-no-terminator" }
  | { kind: "chunk-size-too-big" }
  | { kind: "chunk-missing-crlf" }
  | { kind: "header-without-colon" };

export type EndingSpec =
  | { kind: "end" }
  /** Stop at this permille of the bytes and close (FIN), reset (RST), or keep the socket open. */
  | { kind: "close-at" | "reset-at" | "hang-at"; at: number };

export type FuzzAnswer = {
  /** The search's `limit` (at least 2, so the healthy provider's first result always ranks). */
  limit: number;
  /** 1xx answers sent before the final one. */
  interim: number[];
  /** The final status, or "none": a raw 1xx and then the connection closes. */
  final: number | "none";
  /** An HTTP/1.0 status line (with length or close framing only). */
  http10: boolean;
  contentType: string | null;
  encoding: EncodingSpec;
  body: BodySpec;
  framing: FramingSpec;
  headers: Array<[string, string]>;
  /** Where the bytes are split into separate writes (permille). */
  splits: number[];
  ending: EndingSpec;
};

// ---------------------------------------------------------------------------------------------
// Generators.

/** One of the arbitraries; a failing value shrinks across them towards the first, the simplest. */
function pick<T>(...arbs: Array<fc.Arbitrary<T> | fc.WeightedArbitrary<T>>): fc.Arbitrary<T> {
  return fc.oneof({ withCrossShrink: true }, ...arbs);
}

const UNITS = [
  "a",
  "b",
  "Z",
  "0",
  "é",
  "😀",
  "𝒳",
  "\u0301",
  " ",
  "\t",
  "\n",
  "\r",
  "\u00a0",
  "\u2028",
  "\u3000",
  "\ufeff",
  "\u0000",
  '"',
  "\\",
  "<",
  "\ud800",
];

/** Lengths on either side of every text bound. */
const EDGES = [99, 100, 101, 299, 300, 301, 499, 500, 501, 999, 1_000, 1_001, 1_599, 1_600, 1_601];

const shortText = fc.string({ unit: fc.constantFrom(...UNITS), maxLength: 24 });
const longText = fc
  .tuple(
    fc.constantFrom(...UNITS),
    pick(fc.constantFrom(...EDGES), fc.integer({ min: 0, max: 2_200 })),
  )
  .map(([unit, n]) => unit.repeat(n));
const plantedSecret = fc.constantFrom(...SECRETS.map((s) => s.planted));
const secretText = fc
  .tuple(shortText, plantedSecret, shortText)
  .map(([before, secret, after]) => `${before} ${secret} ${after}`);
const anyText = pick(
  { weight: 6, arbitrary: shortText },
  { weight: 2, arbitrary: longText },
  { weight: 2, arbitrary: secretText },
);

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
  },
  { requiredKeys: ["kind", "version", "code"] },
);

const INVALID_JSON = ["<html>", " ", "{", "nul", "[1,]", "{'a':1}", "NaN", '{"a":1}}', "\u0000"];

const bodySpec: fc.Arbitrary<BodySpec> = pick<BodySpec>(
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

const JSON_TYPES = [
  "application/json",
  "application/json; charset=utf-8",
  "Application/JSON",
  "application/vnd.tracefetch.v1+json",
  "application/problem+json",
  "application/json; api_key=S3CRET",
];
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

// ---------------------------------------------------------------------------------------------
// Rendering an answer to bytes.

const encoder = new TextEncoder();

export function toJson(value: Json): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(toJson).join(",")}]`;
  if ("raw" in value) return value.raw;
  return `{${value.obj.map(([k, v]) => `${JSON.stringify(k)}:${toJson(v)}`).join(",")}}`;
}

function candidateJson(c: WireCandidateSpec, extra: Array<[string, Json]> = []): Json {
  const fields: Array<[string, Json]> = [["title", c.title], ["locator", c.locator]];
  if (c.snippet !== undefined) fields.push(["snippet", c.snippet]);
  if (c.published_at !== undefined) fields.push(["published_at", c.published_at]);
  if (c.metadata !== undefined) fields.push(["metadata", { obj: c.metadata }]);
  return { obj: [...fields, ...extra] };
}

function answerJson(body: Extract<BodySpec, { kind: "answer" }>): string {
  const m = body.mutation;
  if (m?.m === "body-null") return "null";
  const provider = body.identity && body.identity.field !== "scope" ? body.identity.value : FUZZED;
  const scope = body.identity && body.identity.field !== "provider" ? body.identity.value : FUZZED;
  let candidates: Json[] = body.candidates.map((c) => candidateJson(c));
  const first = body.candidates[0] ?? { title: "First", locator: "https://f.example/first" };
  const replaceFirst = (c: Json) => {
    candidates = [c, ...candidates.slice(1)];
  };
  if (m?.m === "unknown-field" && m.at === "candidate") {
    replaceFirst(candidateJson(first, [[m.name, "x"]]));
  }
  if (m?.m === "title-number") replaceFirst({ obj: [["title", 7], ["locator", first.locator]] });
  if (m?.m === "locator-empty") replaceFirst({ obj: [["title", first.title], ["locator", ""]] });
  if (m?.m === "metadata-array") {
    replaceFirst({
      obj: [["title", first.title], ["locator", first.locator], ["metadata", [1, "two"]]],
    });
  }
  if (m?.m === "metadata-string") {
    replaceFirst({
      obj: [["title", first.title], ["locator", first.locator], ["metadata", "meta"]],
    });
  }
  const fields: Array<[string, Json]> = [
    ["schema_version", m?.m === "wrong-version" ? m.value : "tracefetch.provider-response.v1"],
    ["provider", provider],
    ["scope", scope],
  ];
  if (m?.m === "candidates-object") {
    fields.push(["candidates", { obj: [["0", candidates[0] ?? null]] }]);
  } else if (m?.m !== "missing-candidates") fields.push(["candidates", candidates]);
  if (m?.m === "warnings-numbers") fields.push(["warnings", [1, 2]]);
  else if (body.warnings !== undefined) fields.push(["warnings", body.warnings]);
  if (m?.m === "unknown-field" && m.at === "top") fields.push([m.name, "x"]);
  const text = toJson({ obj: fields });
  return m?.m === "body-array" ? `[${text}]` : text;
}

const HUGE_PREFIX =
  '{"schema_version":"tracefetch.provider-response.v1","provider":"fuzzed","scope":"fuzzed",' +
  '"candidates":[{"title":"Huge","locator":"https://huge.example/1","snippet":"';
const HUGE_SUFFIX = '"}]}';

const cache = new Map<string, Uint8Array>();
function cached(key: string, make: () => Uint8Array): Uint8Array {
  let bytes = cache.get(key);
  if (bytes === undefined) {
    bytes = make();
    cache.set(key, bytes);
  }
  return bytes;
}

/** The body as the provider means it, before any content encoding. */
export function plainBody(body: BodySpec): Uint8Array {
  switch (body.kind) {
    case "answer":
      return encoder.encode(answerJson(body));
    case "error": {
      const fields: Array<[string, Json]> = [["schema_version", body.version], ["code", body.code]];
      if (body.message !== undefined) fields.push(["message", body.message]);
      if (body.retry_after_ms !== undefined) fields.push(["retry_after_ms", body.retry_after_ms]);
      return encoder.encode(toJson({ obj: fields }));
    }
    case "invalid-json":
      return encoder.encode(body.text);
    case "invalid-utf8": {
      const title = "invalid bytes follow";
      const json = answerJson({
        kind: "answer",
        candidates: [{ title, locator: "https://f.example/u" }],
      });
      const text = encoder.encode(json);
      // Inside the title (ASCII up to there, so characters are bytes): the bytes are the only fault.
      const at = json.indexOf(title) + (body.at % title.length);
      return Buffer.concat([text.subarray(0, at), Buffer.from(body.bytes), text.subarray(at)]);
    }
    case "empty":
      return new Uint8Array(0);
    case "huge":
      return cached(`huge-${body.bytes}`, () => {
        const fill = body.bytes - HUGE_PREFIX.length - HUGE_SUFFIX.length;
        return encoder.encode(HUGE_PREFIX + "a".repeat(fill) + HUGE_SUFFIX);
      });
  }
}

function compress(codec: Codec, bytes: Uint8Array): Uint8Array {
  switch (codec) {
    case "gzip":
      return gzipSync(bytes, { level: 1 });
    case "deflate":
      return deflateSync(bytes, { level: 1 });
    case "br":
      return brotliCompressSync(bytes, { params: { [zlib.BROTLI_PARAM_QUALITY]: 4 } });
  }
}

function bodyKey(body: BodySpec): string | null {
  return body.kind === "huge" ? `huge-${body.bytes}` : null;
}

/** What the encoding makes of the body: the bytes sent, and what a client may decode them to. */
function encode(
  a: FuzzAnswer,
  plain: Uint8Array,
): {
  sent: Uint8Array;
  label: string | null;
  decoded: "plain" | "decodes" | "undecodable" | "bomb";
} {
  const e = a.encoding;
  const key = bodyKey(a.body);
  const encoded = (codec: Codec) =>
    key === null ? compress(codec, plain) : cached(`${key}-${codec}`, () => compress(codec, plain));
  switch (e.kind) {
    case "none":
      return { sent: plain, label: null, decoded: "plain" };
    case "label":
      return { sent: plain, label: e.label, decoded: "plain" };
    case "encoded":
      return { sent: encoded(e.codec), label: e.codec, decoded: "decodes" };
    case "mislabelled":
      return { sent: plain, label: e.codec, decoded: "undecodable" };
    case "corrupt": {
      const full = encoded(e.codec);
      return {
        sent: full.subarray(0, Math.floor((full.length * e.keep) / 1000)),
        label: e.codec,
        decoded: "undecodable",
      };
    }
    case "bomb":
      return {
        sent: cached(`bomb-${e.codec}`, () => compress(e.codec, new Uint8Array(BOMB_BYTES))),
        label: e.codec,
        decoded: "bomb",
      };
  }
}

/** Cuts `bytes` at the permille points of `splits` (plus the ends). */
function pieces(bytes: Uint8Array, splits: readonly number[]): Uint8Array[] {
  const cuts = [...new Set(splits.map((s) => Math.floor((bytes.length * s) / 1000)))]
    .filter((c) => c > 0 && c < bytes.length)
    .sort((x, y) => x - y);
  const out: Uint8Array[] = [];
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    out.push(bytes.subarray(from, cut));
    from = cut;
  }
  return out.filter((p) => p.length > 0);
}

function chunked(body: Uint8Array, splits: readonly number[], framing: FramingSpec): Uint8Array {
  const parts: Uint8Array[] = [];
  pieces(body, splits).forEach((piece, i) => {
    const size = framing.kind === "chunk-size-too-big" && i === 0
      ? piece.length + 64
      : piece.length;
    const hex = framing.kind === "chunk-bad-hex" && i === 0 ? "zz" : size.toString(16);
    parts.push(encoder.encode(`${hex}\r\n`), piece);
    if (!(framing.kind === "chunk-missing-crlf" && i === 0)) parts.push(encoder.encode("\r\n"));
  });
  if (framing.kind !== "chunk-no-terminator") parts.push(encoder.encode("0\r\n\r\n"));
  return Buffer.concat(parts);
}

export type Rendered = {
  bytes: Uint8Array;
  /** Where the final status's header block ends (the whole length when there is none). */
  headEnd: number;
  /** Where the bytes stop: the whole length, or the cut of a close, reset or hang. */
  cut: number;
  /** Body bytes after content decoding, when they decode. */
  decodedBytes: number;
  decoded: "plain" | "decodes" | "undecodable" | "bomb";
  plain: Uint8Array;
  /** Separate writes. */
  writes: Uint8Array[];
};

/** Stable across runs: text for statuses a real provider might send. */
const REASONS: Record<number, string> = { 200: "OK", 404: "Not Found", 500: "Internal Error" };

export function render(a: FuzzAnswer): Rendered {
  const plain = plainBody(a.body);
  const { sent, label, decoded } = encode(a, plain);
  // Chunked framing does not exist in HTTP/1.0: an HTTP/1.0 status line only frames by length or close.
  const http10 = a.http10 && (a.framing.kind === "length" || a.framing.kind === "close");
  const version = http10 ? "HTTP/1.0" : "HTTP/1.1";
  let head = "";
  for (const status of a.interim) head += `HTTP/1.1 ${status} Interim\r\n\r\n`;
  let body: Uint8Array = new Uint8Array(0);
  if (a.final === "none") {
    if (a.interim.length === 0) head += "HTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n";
  } else {
    const lines = [`${version} ${a.final} ${REASONS[a.final] ?? "Fuzz"}`];
    if (a.contentType !== null) lines.push(`content-type: ${a.contentType}`);
    if (label !== null) lines.push(`content-encoding: ${label}`);
    const f = a.framing;
    const isChunked = f.kind === "chunked" || f.kind === "length-and-chunked" ||
      f.kind.startsWith("chunk-");
    body = isChunked ? chunked(sent, a.splits, f) : sent;
    if (isChunked) lines.push("transfer-encoding: chunked");
    if (
      f.kind === "length" || f.kind === "length-and-chunked" || f.kind === "header-without-colon"
    ) {
      lines.push(`content-length: ${sent.length}`);
    }
    if (f.kind === "length-long") lines.push(`content-length: ${sent.length + f.by}`);
    if (f.kind === "length-short") lines.push(`content-length: ${Math.max(0, sent.length - f.by)}`);
    if (f.kind === "two-lengths") {
      lines.push(`content-length: ${sent.length}`, `content-length: ${sent.length + 7}`);
    }
    if (f.kind === "header-without-colon") lines.push("this line has no colon");
    // Every fuzzed answer is the connection's last: a client never sends the next search's request
    // on a socket this server is about to close, so one run's ending cannot change the next's outcome.
    lines.push("connection: close");
    for (const [name, value] of a.headers) lines.push(`${name}: ${value}`);
    head += lines.join("\r\n") + "\r\n\r\n";
  }
  const headBytes = encoder.encode(head);
  const bytes = Buffer.concat([headBytes, body]);
  const cut = a.ending.kind === "end"
    ? bytes.length
    : Math.floor((bytes.length * a.ending.at) / 1000);
  return {
    bytes,
    headEnd: headBytes.length,
    cut,
    decodedBytes: decoded === "bomb" ? BOMB_BYTES : plain.length,
    decoded,
    plain,
    writes: pieces(bytes.subarray(0, cut), a.splits),
  };
}

// ---------------------------------------------------------------------------------------------
// The provider servers: one plays scripted answers (selected by the request's x-request-id, which
// the gateway forwards), one always answers HEALTHY.

/** One scripted answer: its bytes, and what the request that fetched it said. */
export type Played = {
  answer: FuzzAnswer;
  rendered: Rendered;
  /** Whether the gateway asked for it at all. */
  requested: boolean;
  /** The request's Accept-Encoding: a codec the client did not offer may reach it undecoded. */
  acceptEncoding: string | null;
};

export type FuzzProviders = {
  fuzzedEndpoint: string;
  healthyEndpoint: string;
  /** host:port of both servers: never shown to a caller. */
  hosts: string[];
  script: (requestId: string, answer: FuzzAnswer) => Played;
  forget: (requestId: string) => void;
  close: () => Promise<void>;
};

const HEALTHY_BODY = encoder.encode(JSON.stringify({
  schema_version: "tracefetch.provider-response.v1",
  provider: HEALTHY_NAME,
  scope: HEALTHY_NAME,
  candidates: [HEALTHY],
  warnings: [],
}));
const HEALTHY_ANSWER = Buffer.concat([
  encoder.encode(
    `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${HEALTHY_BODY.length}\r\n\r\n`,
  ),
  HEALTHY_BODY,
]);

/** A socket left hanging is destroyed after this long even if the client never gives up. */
const HANG_LIMIT_MS = 5_000;

/**
 * Reads HTTP/1.1 requests off a socket (content-length or chunked bodies) and calls `onRequest`
 * with each one's header block.
 */
function readRequests(socket: Socket, onRequest: (head: string) => void): void {
  let buffered = Buffer.alloc(0);
  socket.on("data", (data: Buffer) => {
    buffered = Buffer.concat([buffered, data]);
    for (;;) {
      const end = buffered.indexOf("\r\n\r\n");
      if (end < 0) return;
      const head = buffered.subarray(0, end).toString("latin1");
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
      let total: number;
      if (length) {
        total = end + 4 + Number(length[1]);
      } else if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
        const last = buffered.indexOf("\r\n0\r\n\r\n", end);
        if (last < 0) return;
        total = last + 7;
      } else {
        total = end + 4;
      }
      if (buffered.length < total) return;
      buffered = buffered.subarray(total);
      onRequest(head);
    }
  });
}

function track(server: Server, sockets: Set<Socket>): void {
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.setNoDelay(true);
    // The client resets and aborts on purpose; a write after that is expected to fail.
    socket.on("error", () => {});
    socket.on("close", () => sockets.delete(socket));
  });
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

function write(socket: Socket, bytes: Uint8Array): Promise<void> {
  return new Promise((resolve) => {
    if (socket.destroyed) return resolve();
    if (socket.write(bytes)) return resolve();
    const done = () => {
      socket.off("drain", done);
      socket.off("close", done);
      resolve();
    };
    socket.on("drain", done);
    socket.on("close", done);
  });
}

/** Larger writes are split so a client's cancel at the cap stops the server quickly. */
const WRITE_SLICE = 64 * 1024;

async function play(socket: Socket, a: FuzzAnswer, r: Rendered): Promise<void> {
  for (const piece of r.writes) {
    for (let at = 0; at < piece.length && !socket.destroyed; at += WRITE_SLICE) {
      await write(socket, piece.subarray(at, at + WRITE_SLICE));
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  if (socket.destroyed) return;
  switch (a.ending.kind) {
    case "end":
    case "close-at":
      socket.end();
      return;
    case "reset-at":
      if (typeof socket.resetAndDestroy === "function") socket.resetAndDestroy();
      else socket.destroy();
      return;
    case "hang-at": {
      // Hold the socket until the client gives up (its deadline) or the limit passes.
      socket.on("end", () => socket.destroy());
      const timer = setTimeout(() => socket.destroy(), HANG_LIMIT_MS);
      socket.on("close", () => clearTimeout(timer));
      return;
    }
  }
}

export async function startFuzzProviders(): Promise<FuzzProviders> {
  const scripts = new Map<string, Played>();
  const sockets = new Set<Socket>();
  const fuzzed = createServer((socket) => {
    readRequests(socket, (head) => {
      const id = /\r\nx-request-id:\s*([^\r]*)/i.exec(head)?.[1]?.trim() ?? "";
      const entry = scripts.get(id);
      if (entry === undefined) {
        socket.end("HTTP/1.1 599 No Script\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
        return;
      }
      entry.requested = true;
      entry.acceptEncoding = /\r\naccept-encoding:\s*([^\r]*)/i.exec(head)?.[1] ?? null;
      void play(socket, entry.answer, entry.rendered);
    });
  });
  const healthy = createServer((socket) => {
    readRequests(socket, () => socket.write(HEALTHY_ANSWER));
  });
  track(fuzzed, sockets);
  track(healthy, sockets);
  const fuzzedPort = await listen(fuzzed);
  const healthyPort = await listen(healthy);
  return {
    fuzzedEndpoint: `http://127.0.0.1:${fuzzedPort}/search`,
    healthyEndpoint: `http://127.0.0.1:${healthyPort}/search`,
    hosts: [`127.0.0.1:${fuzzedPort}`, `127.0.0.1:${healthyPort}`],
    script: (id, answer) => {
      const played: Played = {
        answer,
        rendered: render(answer),
        requested: false,
        acceptEncoding: null,
      };
      scripts.set(id, played);
      return played;
    },
    forget: (id) => scripts.delete(id),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await Promise.all(
        [fuzzed, healthy].map((s) => new Promise<void>((resolve) => s.close(() => resolve()))),
      );
    },
  };
}

/** The manifest entries of the two providers. */
export function fuzzProviderEntries(providers: FuzzProviders) {
  return [
    { name: FUZZED, endpoint: providers.fuzzedEndpoint },
    { name: HEALTHY_NAME, endpoint: providers.healthyEndpoint },
  ];
}

/** The search's query string for one answer: a hang gets a short deadline so it ends fast. */
export function searchQuery(a: FuzzAnswer): string {
  const hangs = a.ending.kind === "hang-at";
  return new URLSearchParams({
    q: "fuzz",
    providers: `${FUZZED},${HEALTHY_NAME}`,
    limit: String(a.limit),
    timeout_ms: String(hangs ? HANG_DEADLINE_MS : DEADLINE_MS),
  }).toString();
}

// ---------------------------------------------------------------------------------------------
// What the fuzzed attempt must be, from what was sent.

export type Expectation =
  | { kind: "success"; count: number }
  | { kind: "failure"; outcomes: string[]; codes?: string[]; retryable?: boolean }
  /** Broken in transit: any documented failure or, when the bytes happen to be complete, success. */
  | { kind: "documented" };

const PROTOCOL = "provider_protocol_error";
const fail = (outcome: string, code?: string, retryable?: boolean): Expectation => ({
  kind: "failure",
  outcomes: [outcome],
  ...(code === undefined ? {} : { codes: [code] }),
  ...(retryable === undefined ? {} : { retryable }),
});

const CLEAN_FRAMING = new Set(["length", "chunked", "close"]);
const UNDECODABLE = ["invalid_encoding", "invalid_utf8", "invalid_json"];

/**
 * The failure a non-2xx answer must be (docs/protocol.md): a readable provider-error body's valid
 * `code` decides, whatever its other fields; otherwise the status does.
 */
function statusFailure(a: FuzzAnswer, r: Rendered, status: number): Expectation {
  const b = a.body;
  const readable = (r.decoded === "plain" || r.decoded === "decodes") &&
    r.decodedBytes <= MAX_ERROR_BODY_BYTES;
  const said = readable && b.kind === "error" && b.version === "tracefetch.provider-error.v1" &&
      (PROVIDER_ERROR_CODES as readonly string[]).includes(b.code)
    ? b.code
    : null;
  const code = said ?? (status === 429 ? "rate_limited" : "search_failed");
  const retryable = code === "rate_limited" || code === "adapter_unavailable" ||
    (code === "search_failed" && (status >= 500 || status === 408));
  return fail(
    code === "adapter_unavailable" ? "adapter_unavailable" : "search_failed",
    code,
    retryable,
  );
}

/** The outcome of a complete, well-framed 2xx answer with a JSON content type. */
function answerOutcome(a: FuzzAnswer, r: Rendered): Expectation {
  // Whether a client notices a cut or mislabelled stream before or after handing out some bytes
  // is its own affair; either way the answer is unusable and the provider's fault.
  if (r.decoded === "undecodable") {
    // A cut stream may decode past the cap before its cut is reached.
    const codes = r.plain.length > MAX_PROVIDER_BODY_BYTES
      ? [...UNDECODABLE, "body_too_large"]
      : UNDECODABLE;
    return { kind: "failure", outcomes: [PROTOCOL], codes, retryable: false };
  }
  if (r.decoded === "bomb" || r.decodedBytes > MAX_PROVIDER_BODY_BYTES) {
    return fail(PROTOCOL, "body_too_large", false);
  }
  const b = a.body;
  switch (b.kind) {
    case "answer": {
      if (b.mutation !== undefined) return fail(PROTOCOL, "schema_violation", false);
      if (b.identity !== undefined) return fail(PROTOCOL, "identity_mismatch", false);
      const short = b.candidates.filter((c) => Array.from(c.locator).length <= MAX_LOCATOR_CHARS);
      return { kind: "success", count: Math.min(a.limit, short.length) };
    }
    case "huge":
      return { kind: "success", count: 1 };
    case "error":
      return fail(PROTOCOL, "schema_violation", false);
    case "invalid-json":
    case "empty":
      return fail(PROTOCOL, "invalid_json", false);
    case "invalid-utf8":
      return fail(PROTOCOL, "invalid_utf8", false);
  }
}

export function expectationOf(a: FuzzAnswer, r: Rendered): Expectation {
  if (!CLEAN_FRAMING.has(a.framing.kind)) return { kind: "documented" };
  const status = a.final === "none" ? null : a.final;
  const ending = a.ending.kind;
  if (ending === "close-at" || ending === "reset-at") return { kind: "documented" };
  if (ending === "hang-at") {
    // Nothing final arrived: only the deadline can end the attempt.
    if (status === null || r.cut < r.headEnd) return fail("timeout", "timeout", true);
    if (status >= 300 && status < 400) return fail(PROTOCOL, "redirect", false);
    if (status === 204 || status === 205) return fail(PROTOCOL, "invalid_json", false);
    if (status < 300 && !isJsonType(a.contentType)) {
      return fail(PROTOCOL, "wrong_content_type", false);
    }
    // The client waits for the rest of a body it can read, unless what came already reaches the
    // cap it reads to (64 KiB of an error body, the whole cap of an answer).
    const cap = status >= 400 ? MAX_ERROR_BODY_BYTES : MAX_PROVIDER_BODY_BYTES;
    const waits = (r.decoded === "plain" || r.decoded === "decodes") && r.decodedBytes <= cap;
    return waits ? fail("timeout", "timeout", true) : { kind: "documented" };
  }
  if (status === null) return { kind: "documented" };
  if (status >= 300 && status < 400) return fail(PROTOCOL, "redirect", false);
  if (status >= 400) return statusFailure(a, r, status);
  if (status === 204 || status === 205) return fail(PROTOCOL, "invalid_json", false);
  if (!isJsonType(a.contentType)) return fail(PROTOCOL, "wrong_content_type", false);
  return answerOutcome(a, r);
}

/**
 * What each runtime's provider client makes of interim 1xx answers before the final one
 * (docs/protocol.md): workerd hands the first interim status over as the answer, and Node's client
 * refuses an unasked-for `100 Continue` as a broken answer. Deno reads past every interim answer.
 */
function interimReadings(a: FuzzAnswer, runtime: string): Expectation[] {
  if (a.interim.length === 0) return [];
  if (runtime === "workerd") return [fail(PROTOCOL, "interim_response", false)];
  if (runtime === "Node" && a.interim.includes(100)) {
    return [fail("adapter_unavailable", "connection_reset", true)];
  }
  return [];
}

/**
 * What the attempt may be. A codec the request did not offer (Deno's fetch offers gzip and br, not
 * deflate) may reach the gateway decoded or as it was sent: either reading is allowed.
 */
export function expectationsOf(played: Played, runtime: string): Expectation[] {
  const { answer: a, rendered: r } = played;
  const main = [expectationOf(a, r), ...interimReadings(a, runtime)];
  const e = a.encoding;
  if (e.kind === "none" || e.kind === "label") return main;
  const offered = (played.acceptEncoding ?? "").split(",").map((c) =>
    c.split(";")[0]?.trim().toLowerCase()
  );
  if (offered.includes(e.codec)) return main;
  const passed: Rendered = e.kind === "mislabelled"
    ? { ...r, decoded: "plain", decodedBytes: r.plain.length }
    : { ...r, decoded: "undecodable" };
  return [...main, expectationOf(a, passed)];
}

function isJsonType(type: string | null): boolean {
  return type !== null && JSON_TYPES.includes(type);
}

// ---------------------------------------------------------------------------------------------
// The assertions on one search.

/** Which outcome each attempt code belongs to (src/protocol/codes.ts). */
const OUTCOME_OF: Record<string, string> = {
  ok: "success",
  timeout: "timeout",
  adapter_unavailable: "adapter_unavailable",
  dns_failure: "adapter_unavailable",
  connection_refused: "adapter_unavailable",
  connection_reset: "adapter_unavailable",
  tls_failure: "adapter_unavailable",
  search_failed: "search_failed",
  rate_limited: "search_failed",
  invalid_request: "search_failed",
  unsupported_action: "search_failed",
  connection_lost: "search_failed",
  body_too_large: PROTOCOL,
  search_budget_exceeded: PROTOCOL,
  invalid_encoding: PROTOCOL,
  invalid_utf8: PROTOCOL,
  invalid_json: PROTOCOL,
  schema_violation: PROTOCOL,
  identity_mismatch: PROTOCOL,
  redirect: PROTOCOL,
  wrong_content_type: PROTOCOL,
  interim_response: PROTOCOL,
  cancelled: "cancelled",
};

export type Exchange = { status: number; headers: Headers; text: string };

const points = (s: string) => Array.from(s).length;

// deno-lint-ignore no-explicit-any
type Loose = any;

/** Why an attempt is not what `e` says, or null when it is. */
function mismatch(e: Expectation, attempt: Loose): string | null {
  if (e.kind === "documented") return null;
  if (e.kind === "success") {
    if (attempt.outcome !== "success") return "expected success";
    return attempt.candidate_count === e.count ? null : `expected ${e.count} candidates`;
  }
  if (!e.outcomes.includes(attempt.outcome)) return `expected ${e.outcomes.join(" or ")}`;
  if (e.codes && !e.codes.includes(attempt.code)) return `expected code ${e.codes.join(" or ")}`;
  if (e.retryable !== undefined && attempt.retryable !== e.retryable) {
    return `expected retryable ${e.retryable}`;
  }
  return null;
}

/** Every candidate field inside its bound; metadata within keys, depth, strings and arrays. */
function assertCandidateBounds(c: Loose, where: string): void {
  assert.ok(
    points(c.title) <= MAX_TITLE_CHARS,
    `${where}: title of ${points(c.title)} code points`,
  );
  assert.ok(points(c.snippet ?? "") <= MAX_SNIPPET_CHARS, `${where}: snippet too long`);
  assert.ok(
    c.published_at === null || points(c.published_at) <= MAX_PUBLISHED_AT_CHARS,
    `${where}: published_at too long`,
  );
  assert.ok(points(c.locator) <= MAX_LOCATOR_CHARS, `${where}: locator too long`);
  if ("metadata" in c) assertMetadataBounds(c.metadata, `${where}.metadata`);
}

function assertMetadataBounds(root: unknown, where: string): void {
  assert.ok(
    typeof root === "object" && root !== null && !Array.isArray(root),
    `${where} is not an object: ${JSON.stringify(root)?.slice(0, 200)}`,
  );
  const visit = (value: unknown, path: string, depth: number): void => {
    if (typeof value === "string") {
      assert.ok(points(value) <= MAX_METADATA_STRING_CHARS, `${path}: string too long`);
      return;
    }
    if (typeof value === "number") {
      assert.ok(Number.isFinite(value), `${path}: ${value}`);
      return;
    }
    if (value === null || typeof value === "boolean") return;
    assert.ok(typeof value === "object", `${path}: ${typeof value}`);
    assert.ok(depth <= MAX_METADATA_DEPTH, `${path} nests deeper than ${MAX_METADATA_DEPTH}`);
    if (Array.isArray(value)) {
      assert.ok(value.length <= MAX_METADATA_ARRAY_ITEMS, `${path}: ${value.length} items`);
      value.forEach((item, i) => visit(item, `${path}[${i}]`, depth + 1));
      return;
    }
    const keys = Object.keys(value);
    assert.ok(keys.length <= MAX_METADATA_KEYS, `${path}: ${keys.length} keys`);
    for (const key of keys) {
      assert.ok(key.length <= MAX_METADATA_KEY_CHARS, `${path}: a key of ${key.length} characters`);
      assert.ok(!POISON_KEYS.has(key), `${path}.${key} is a prototype key`);
      assert.ok(!SECRET_KEY.test(key), `${path}.${key} names a secret`);
      visit((value as Record<string, unknown>)[key], `${path}.${key}`, depth + 1);
    }
  };
  visit(root, where, 1);
}

/** The strings a caller reads as diagnostics or metadata: messages, warnings, errors, metadata. */
function diagnosticStrings(envelope: unknown): string[] {
  const out: string[] = [];
  const DIAGNOSTIC = new Set(["message", "warnings", "error", "metadata"]);
  const walk = (value: unknown, inside: boolean): void => {
    if (typeof value === "string") {
      if (inside) out.push(value);
    } else if (Array.isArray(value)) {
      for (const item of value) walk(item, inside);
    } else if (typeof value === "object" && value !== null) {
      for (const [key, child] of Object.entries(value)) {
        if (inside) out.push(key);
        walk(child, inside || DIAGNOSTIC.has(key));
      }
    }
  };
  walk(envelope, false);
  return out;
}

/**
 * Everything one search must satisfy whatever the fuzzed provider sent: a valid envelope, the
 * healthy provider merged, a documented outcome that matches what was sent, every bound, no leak.
 */
export function assertSearch(
  played: Played,
  exchange: Exchange,
  hosts: readonly string[],
  runtime: string,
): void {
  const a = played.answer;
  const { status, text, headers } = exchange;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    assert.fail(
      `the gateway answered HTTP ${status} with something that is not JSON: ${text.slice(0, 300)}`,
    );
  }
  assert.ok(
    validators.envelope(parsed),
    `not a valid envelope: ${JSON.stringify(validators.envelope.errors)}\n${text.slice(0, 1_500)}`,
  );
  const envelope: Loose = parsed;
  assert.equal(status, 200, `HTTP ${status}: ${text.slice(0, 500)}`);
  assert.ok(envelope.code === "ok" || envelope.code === "partial", `code ${envelope.code}`);
  const attempts: Loose[] = envelope.result.candidates;
  assert.deepEqual(attempts.map((x) => x.provider).sort(), [FUZZED, HEALTHY_NAME]);
  const fuzzed = attempts.find((x) => x.provider === FUZZED);
  const healthy = attempts.find((x) => x.provider === HEALTHY_NAME);
  const shown = JSON.stringify(fuzzed).slice(0, 600);
  assert.ok(played.requested, `the fuzzed provider was never asked: ${shown}`);

  // The healthy provider is untouched by its neighbour.
  assert.equal(healthy.outcome, "success", `healthy: ${JSON.stringify(healthy).slice(0, 400)}`);
  assert.equal(healthy.candidate_count, 1);
  assert.ok(
    envelope.result.merged.some((m: Loose) =>
      m.found_by.includes(HEALTHY_NAME) && m.locator === HEALTHY.locator
    ),
    "the healthy provider's result is not in merged",
  );

  // A documented outcome, its code in the same row, and what was sent decides which.
  assert.ok((ATTEMPT_OUTCOMES as readonly string[]).includes(fuzzed.outcome), shown);
  assert.ok((ATTEMPT_CODES as readonly string[]).includes(fuzzed.code), shown);
  const row = OUTCOME_OF[fuzzed.code];
  if (row !== undefined) {
    assert.equal(fuzzed.outcome, row, `code ${fuzzed.code} under ${fuzzed.outcome}`);
  }
  assert.ok(fuzzed.outcome !== "skipped" && fuzzed.outcome !== "cancelled", shown);
  assert.equal(envelope.code, fuzzed.outcome === "success" ? "ok" : "partial");
  const expected = expectationsOf(played, runtime);
  const problems = expected.map((e) => mismatch(e, fuzzed)).filter((p) => p !== null);
  assert.ok(problems.length < expected.length, `${problems.join("; or ")}, got ${shown}`);
  if (fuzzed.outcome === "timeout") assert.ok(fuzzed.budget !== undefined, shown);

  // A failed attempt contributes nothing.
  if (fuzzed.outcome === "success") {
    assert.equal(fuzzed.candidates.length, fuzzed.candidate_count);
  } else {
    assert.equal("candidates" in fuzzed, false, `a failed attempt carries candidates: ${shown}`);
    assert.equal(fuzzed.candidate_count, 0);
    assert.ok(
      envelope.result.merged.every((m: Loose) => !m.found_by.includes(FUZZED)),
      "a failed attempt's candidates were merged",
    );
  }

  // Every bound.
  assert.ok(envelope.result.merged.length <= a.limit, `${envelope.result.merged.length} merged`);
  for (const attempt of attempts) {
    const where = attempt.provider;
    assert.ok(
      attempt.candidate_count <= a.limit,
      `${where}: ${attempt.candidate_count} candidates`,
    );
    assert.ok(
      attempt.warnings.length <= MAX_WARNINGS,
      `${where}: ${attempt.warnings.length} warnings`,
    );
    for (const w of attempt.warnings) {
      assert.ok(points(w) <= MAX_WARNING_CHARS, `${where}: a warning of ${points(w)} code points`);
    }
    assert.ok(points(attempt.message) <= MAX_DIAGNOSTIC_CHARS, `${where}: message too long`);
    if (attempt.retry_after_ms !== undefined) {
      assert.ok(
        Number.isSafeInteger(attempt.retry_after_ms) && attempt.retry_after_ms >= 0 &&
          attempt.retry_after_ms <= MAX_PROVIDER_WAIT_MS,
        `${where}: retry_after_ms ${attempt.retry_after_ms} is not a wait of at most one hour`,
      );
    }
    (attempt.candidates ?? []).forEach((c: Loose, i: number) =>
      assertCandidateBounds(c, `${where}[${i}]`)
    );
  }
  envelope.result.merged.forEach((m: Loose, i: number) => assertCandidateBounds(m, `merged[${i}]`));
  if (envelope.retry_after_ms !== undefined) {
    assert.ok(
      envelope.retry_after_ms <= MAX_PROVIDER_WAIT_MS,
      `retry_after_ms ${envelope.retry_after_ms}`,
    );
  }

  // No planted secret in a diagnostic, in metadata or in a header; no provider address anywhere.
  const diagnostics = diagnosticStrings(envelope);
  const headerText = [...headers].map(([k, v]) => `${k}: ${v}`).join("\n");
  for (const { secret } of SECRETS) {
    const leak = diagnostics.find((s) => s.includes(secret));
    assert.equal(leak, undefined, `"${secret}" reached the caller in: ${leak?.slice(0, 400)}`);
    assert.equal(headerText.includes(secret), false, `"${secret}" reached a response header`);
  }
  for (const host of hosts) assert.equal(text.includes(host), false, `the address ${host} leaked`);
}

// ---------------------------------------------------------------------------------------------
// Running the property.

/** Counts uncaught exceptions and unhandled rejections: on Node, process events; elsewhere, global events. */
export function countCrashes(): { count: () => number; last: () => unknown; stop: () => void } {
  let count = 0;
  let last: unknown = null;
  const seen = (error: unknown) => {
    count++;
    last = error;
  };
  if ("Deno" in globalThis) {
    const onError = (e: Event) => {
      e.preventDefault();
      seen((e as ErrorEvent).error);
    };
    const onRejection = (e: Event) => {
      e.preventDefault();
      seen((e as PromiseRejectionEvent).reason);
    };
    globalThis.addEventListener("error", onError);
    globalThis.addEventListener("unhandledrejection", onRejection);
    return {
      count: () => count,
      last: () => last,
      stop: () => {
        globalThis.removeEventListener("error", onError);
        globalThis.removeEventListener("unhandledrejection", onRejection);
      },
    };
  }
  process.on("uncaughtException", seen);
  process.on("unhandledRejection", seen);
  return {
    count: () => count,
    last: () => last,
    stop: () => {
      process.off("uncaughtException", seen);
      process.off("unhandledRejection", seen);
    },
  };
}

/** `seconds` null: no time limit, the runs decide. */
export type FuzzSettings = { runs: number; seconds: number | null; floor: number; seed?: number };

/**
 * The defaults, unless TRACEFETCH_FUZZ_RUNS sets the runs (and lifts the time limit, unless
 * TRACEFETCH_FUZZ_SECONDS sets one); TRACEFETCH_FUZZ_SEED replays a seed.
 */
export function fuzzSettings(
  defaults: { runs: number; seconds: number; floor: number },
): FuzzSettings {
  const env = (name: string) => {
    const value = process.env[name];
    const n = value === undefined || value === "" ? NaN : Number(value);
    return Number.isInteger(n) ? n : null;
  };
  const asked = env("TRACEFETCH_FUZZ_RUNS");
  const runs = asked ?? defaults.runs;
  const seed = env("TRACEFETCH_FUZZ_SEED");
  return {
    runs,
    seconds: env("TRACEFETCH_FUZZ_SECONDS") ?? (asked === null ? defaults.seconds : null),
    // Fewer runs asked for than the floor: the floor is what was asked.
    floor: Math.min(defaults.floor, runs),
    ...(seed === null ? {} : { seed }),
  };
}

/**
 * Searches once per generated answer until `runs` or `seconds`, whichever comes first; fails on
 * the first answer that breaks an assertion (shrunk to a minimal one) or when fewer than `floor`
 * runs were done.
 */
export async function runProviderFuzz(options: {
  runtime: string;
  providers: FuzzProviders;
  settings: FuzzSettings;
  call: (requestId: string, query: string) => Promise<Exchange>;
}): Promise<void> {
  const { providers, settings, call } = options;
  const crashes = countCrashes();
  let next = 0;
  const started = performance.now();
  try {
    const property = fc.asyncProperty(fuzzAnswer, async (a) => {
      const id = `fz${++next}`;
      const before = crashes.count();
      const played = providers.script(id, a);
      let exchange: Exchange;
      try {
        exchange = await call(id, searchQuery(a));
      } finally {
        providers.forget(id);
      }
      // An 'error' event nobody listens to surfaces on a later tick: let it.
      await new Promise((resolve) => setTimeout(resolve, 0));
      assert.equal(
        crashes.count(),
        before,
        `an uncaught exception or unhandled rejection during this search: ${
          String(crashes.last())
        }`,
      );
      assertSearch(played, exchange, providers.hosts, options.runtime);
    });
    const details = await fc.check(property, {
      numRuns: settings.runs,
      ...(settings.seconds === null
        ? {}
        : { interruptAfterTimeLimit: settings.seconds * 1_000, markInterruptAsFailure: false }),
      ...(settings.seed === undefined ? {} : { seed: settings.seed }),
    });
    const seconds = (performance.now() - started) / 1_000;
    console.log(
      `provider fuzz on ${options.runtime}: ${details.numRuns} runs in ${seconds.toFixed(1)} s ` +
        `(${(details.numRuns / seconds).toFixed(0)} runs/s, seed ${details.seed})`,
    );
    if (details.failed) {
      const error = details.errorInstance;
      const why = error instanceof Error ? error.message : String(error);
      const report = `${fc.defaultReportMessage(details) ?? "the property failed"}\n${why}`;
      // Printed as well as thrown: a test runner that already failed the test on an uncaught
      // exception reports that exception, not this counterexample.
      console.log(report);
      throw new Error(report);
    }
    assert.ok(
      details.numRuns >= settings.floor,
      `only ${details.numRuns} runs in ${settings.seconds} s; at least ${settings.floor} are required`,
    );
  } finally {
    crashes.stop();
  }
}
