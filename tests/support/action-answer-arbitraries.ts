/**
 * Generated answers of a provider to `expand` and to `refresh` (which the gateway reads as a
 * health answer; docs/protocol.md, "Actions"), the bytes the `fuzzed` provider of
 * tests/support/action-fuzz-fixture.ts sends for each, and what the gateway must make of them.
 *
 * An answer: a status (2xx, 204, 3xx, 4xx, 5xx), a content type (JSON or not), an encoding (none,
 * gzip, gzip bytes with no label, a gzip label on plain bytes), extra headers carrying secrets, an
 * ending (complete, or the socket reset after the head), and a body: evidence or health (valid, or
 * broken by one mutation: a wrong schema version, another identity or locator, an extra or missing
 * field, a wrong type), an answer of the other action, a provider-error body, text that is not
 * JSON, bytes that are not UTF-8, or nothing. Texts mix awkward code units, lone surrogates, the
 * planted secrets of fuzz-secrets.ts and long runs on either side of every bound
 * (MAX_TITLE_CHARS, MAX_EXPAND_TEXT_CHARS, MAX_DIAGNOSTIC_CHARS, the body cap).
 */
import fc from "fast-check";
import { gzipSync } from "node:zlib";
import {
  HEALTH_COVERAGES,
  HEALTH_STATUSES,
  PROVIDER_ERROR_CODES,
} from "../../src/protocol/codes.ts";
import {
  MAX_DIAGNOSTIC_CHARS,
  MAX_ERROR_BODY_BYTES,
  MAX_EXPAND_TEXT_CHARS,
  MAX_HEALTH_DIAGNOSTICS,
  MAX_LOCATOR_CHARS,
  MAX_NAME_CHARS,
  MAX_PROVIDER_BODY_BYTES,
  MAX_PROVIDER_WAIT_MS,
  MAX_REVISION_CHARS,
  MAX_TITLE_CHARS,
} from "../../src/protocol/limits.ts";
import {
  PROVIDER_EXPAND_VERSION,
  PROVIDER_HEALTH_VERSION,
} from "../../src/protocol/provider-actions.ts";
import { JSON_TYPES } from "./fuzz-answer.ts";
import { GHP_TOKEN, JWT, PEM, SECRETS } from "./fuzz-secrets.ts";
import { pick } from "./fuzz-text-arbitraries.ts";
import type { Wire } from "./fuzz-wire.ts";
import { wireText } from "./fuzz-wire.ts";
import { FUZZED, type Script } from "./action-fuzz-fixture.ts";

/** A text as parts, a long run being a unit and a count, so a counterexample prints small. */
export type TextSpec = Array<string | { long: string; n: number }>;

export type EvidenceMutation =
  | { m: "wrong-version"; value: string }
  | { m: "unknown-field"; name: string }
  | { m: "missing"; field: string }
  | { m: "title-number" }
  | { m: "text-null" }
  | { m: "retrieved-at"; value: string }
  | { m: "content-type"; value: string }
  | { m: "revision"; value: string }
  | { m: "truncated-string" }
  | { m: "locator"; value: string }
  | { m: "identity"; field: "provider" | "scope"; value: string }
  | { m: "body-array" }
  | { m: "body-null" };

export type HealthMutation =
  | { m: "wrong-version"; value: string }
  | { m: "unknown-field"; name: string }
  | { m: "missing"; field: string }
  | { m: "status"; value: Wire }
  | { m: "coverage"; value: Wire }
  | { m: "watermark"; value: Wire }
  | { m: "document-count"; value: Wire }
  | { m: "diagnostics"; value: Wire }
  | { m: "identity"; field: "provider" | "scope"; value: string };

export type EvidenceBody = {
  kind: "evidence";
  title: TextSpec;
  text: TextSpec;
  content_type: string;
  retrieved_at: string;
  revision?: string;
  truncated?: boolean;
  mutation?: EvidenceMutation;
};

export type HealthBody = {
  kind: "health";
  status: string;
  coverage: string;
  watermark: string | null;
  document_count?: number;
  diagnostics?: TextSpec[];
  /** Plain diagnostics added after the generated ones, past MAX_HEALTH_DIAGNOSTICS. */
  padding: number;
  mutation?: HealthMutation;
};

export type AnswerBody =
  | EvidenceBody
  | HealthBody
  | {
    kind: "error";
    version: string;
    code: string;
    message?: TextSpec;
    retry_after_ms?: Wire;
    retryable?: Wire;
  }
  | { kind: "invalid-json"; text: string }
  | { kind: "invalid-utf8"; bytes: readonly number[] }
  | { kind: "empty" };

export type Encoding = "none" | "gzip" | "gzip-unlabelled" | "gzip-mislabelled";

export type ActionAnswerSpec = {
  action: "expand" | "refresh";
  /** The locator the expand asks for (ASKED_LOCATORS). */
  asked: number;
  status: number;
  contentType: string | null;
  encoding: Encoding;
  body: AnswerBody;
  headers: Array<[string, string]>;
  ending: "end" | "reset";
};

/** The locators an expand asks the `fuzzed` provider for: short, and 2,000 astral code points. */
export const ASKED_LOCATORS = [
  "https://fuzzed.example/page",
  "https://fuzzed.example/a?b=c#d",
  `https://fuzzed.example/${"𝒳".repeat(MAX_LOCATOR_CHARS - 23)}`,
];

/**
 * A day past the end of its month (February 30): not an RFC 3339 date-time, although `Date.parse`
 * rolls it over into March.
 */
export const IMPOSSIBLE_DATE = "2025-02-30T10:00:00Z";

// ---- Texts ----

/**
 * Units that no redaction rule touches (no keyword, no `:` or `=`), so a text of them alone comes
 * back exactly, cut at its bound; `\u200b` and the lone surrogate are the exceptions the checks
 * know (invisible, and made U+FFFD).
 */
const CLEAN_UNITS = ["a", "b", "Z", "0", "é", "😀", "𝒳", "\u0301", " ", "\n", "\t", "\u00a0", "<"];
const cleanShort = fc.string({ unit: fc.constantFrom(...CLEAN_UNITS), maxLength: 20 });
const surrogate = fc.constantFrom("\ud800", "\udfff", "x\ud83d", "\ude00y");
const secret = fc.constantFrom(...SECRETS.map((s) => s.planted));

/** A run of one unit, `n` long, near `bound` (or anywhere up to it). */
const run = (bound: number) =>
  fc.tuple(
    fc.constantFrom("a", "😀", "\n", "é"),
    pick(
      fc.integer({ min: bound - 3, max: bound + 3 }),
      fc.integer({ min: 0, max: bound + 20 }),
    ),
  ).map(([long, n]) => ({ long, n: Math.max(0, n) }));

/** A text: a few parts, mostly short and clean, some secret, surrogate or long. */
const textSpec = (bound: number): fc.Arbitrary<TextSpec> =>
  fc.array(
    pick<TextSpec[number]>(
      { weight: 10, arbitrary: cleanShort },
      { weight: 2, arbitrary: secret.map((s) => ` ${s} `) },
      { weight: 1, arbitrary: surrogate },
      { weight: 2, arbitrary: run(bound) },
    ),
    { minLength: 1, maxLength: 4 },
  );

export function textOf(spec: TextSpec): string {
  return spec.map((p) => (typeof p === "string" ? p : p.long.repeat(p.n))).join("");
}

/** Whether the text carries a planted secret (then the checks look for no secret, not equality). */
export function plantsSecret(spec: TextSpec): boolean {
  return spec.some((p) => typeof p === "string" && SECRETS.some((s) => p.includes(s.planted)));
}

// ---- Bodies ----

const IDENTITY_VALUES = ["someone-else", "FUZZED", "fuzzed ", "", "notes", `${GHP_TOKEN}`];
const UNKNOWN_NAMES = ["score", "Title", "__proto__", "constructor", "api_key", JWT];

const evidenceMutation: fc.Arbitrary<EvidenceMutation> = pick<EvidenceMutation>(
  fc.record({
    m: fc.constant("wrong-version" as const),
    value: fc.constantFrom(
      "tracefetch.provider-expand.v2",
      "",
      PROVIDER_HEALTH_VERSION,
      "tracefetch.provider-response.v1",
    ),
  }),
  fc.record({ m: fc.constant("unknown-field" as const), name: fc.constantFrom(...UNKNOWN_NAMES) }),
  fc.record({
    m: fc.constant("missing" as const),
    field: fc.constantFrom(
      "schema_version",
      "provider",
      "scope",
      "locator",
      "title",
      "text",
      "content_type",
      "retrieved_at",
    ),
  }),
  fc.constantFrom<EvidenceMutation>(
    { m: "title-number" },
    { m: "text-null" },
    { m: "truncated-string" },
    { m: "body-array" },
    { m: "body-null" },
  ),
  fc.record({
    m: fc.constant("retrieved-at" as const),
    value: fc.constantFrom("yesterday", IMPOSSIBLE_DATE, "2025-13-01T10:00:00Z", "2025-01-01", ""),
  }),
  fc.record({
    m: fc.constant("content-type" as const),
    value: fc.constantFrom("", "t".repeat(MAX_NAME_CHARS * 2 + 1)),
  }),
  fc.record({
    m: fc.constant("revision" as const),
    value: fc.constantFrom("", "r".repeat(MAX_REVISION_CHARS + 1)),
  }),
  fc.record({
    m: fc.constant("locator" as const),
    value: fc.constantFrom(
      "https://fuzzed.example/other",
      "",
      "HTTPS://FUZZED.EXAMPLE/page",
      "p".repeat(MAX_LOCATOR_CHARS + 1),
    ),
  }),
  fc.record({
    m: fc.constant("identity" as const),
    field: fc.constantFrom("provider" as const, "scope" as const),
    value: fc.constantFrom(...IDENTITY_VALUES),
  }),
);

const RETRIEVED = ["2025-01-01T00:00:00Z", "2026-11-30T17:07:43.512Z", "2025-06-15T08:00:00+02:00"];

const evidenceBody: fc.Arbitrary<EvidenceBody> = fc.record(
  {
    kind: fc.constant("evidence" as const),
    title: textSpec(MAX_TITLE_CHARS),
    text: pick(
      { weight: 3, arbitrary: textSpec(MAX_EXPAND_TEXT_CHARS) },
      // A secret straddling the cut: redaction must come first, so no half of it is left.
      {
        weight: 1,
        arbitrary: fc.tuple(fc.integer({ min: -30, max: 30 }), secret).map((
          [shift, s],
        ): TextSpec => [{ long: "a", n: MAX_EXPAND_TEXT_CHARS - 12 + shift }, ` ${s} `, "tail"]),
      },
    ),
    content_type: fc.constantFrom("text/plain", "text/markdown; charset=utf-8", "text/html"),
    retrieved_at: fc.constantFrom(...RETRIEVED),
    revision: fc.constantFrom("r1", "0123abcd", "r".repeat(MAX_REVISION_CHARS)),
    truncated: fc.boolean(),
  },
  { requiredKeys: ["kind", "title", "text", "content_type", "retrieved_at"] },
);

const healthMutation: fc.Arbitrary<HealthMutation> = pick<HealthMutation>(
  fc.record({
    m: fc.constant("wrong-version" as const),
    value: fc.constantFrom(
      "tracefetch.provider-health.v2",
      PROVIDER_EXPAND_VERSION,
      "",
      "tracefetch.provider-describe.v1",
    ),
  }),
  fc.record({ m: fc.constant("unknown-field" as const), name: fc.constantFrom(...UNKNOWN_NAMES) }),
  fc.record({
    m: fc.constant("missing" as const),
    field: fc.constantFrom(
      "schema_version",
      "provider",
      "scope",
      "status",
      "coverage",
      "watermark",
    ),
  }),
  fc.record({
    m: fc.constant("status" as const),
    value: fc.constantFrom<Wire>("fine", "OK", "", null, 1),
  }),
  fc.record({
    m: fc.constant("coverage" as const),
    value: fc.constantFrom<Wire>("full", "", null, true),
  }),
  fc.record({
    m: fc.constant("watermark" as const),
    value: fc.constantFrom<Wire>("yesterday", IMPOSSIBLE_DATE, "2025-01-01", 0),
  }),
  fc.record({
    m: fc.constant("document-count" as const),
    value: fc.constantFrom<Wire>(-1, 1.5, "3", null, { raw: "1e400" }),
  }),
  fc.record({
    m: fc.constant("diagnostics" as const),
    value: fc.constantFrom<Wire>("x", [1, 2], [null], { obj: [["a", "b"]] }, null),
  }),
  fc.record({
    m: fc.constant("identity" as const),
    field: fc.constantFrom("provider" as const, "scope" as const),
    value: fc.constantFrom(...IDENTITY_VALUES),
  }),
);

const healthBody: fc.Arbitrary<HealthBody> = fc.record(
  {
    kind: fc.constant("health" as const),
    status: fc.constantFrom(...HEALTH_STATUSES),
    coverage: fc.constantFrom(...HEALTH_COVERAGES),
    watermark: fc.constantFrom(null, ...RETRIEVED),
    document_count: fc.constantFrom(0, 1, 12_345, Number.MAX_SAFE_INTEGER),
    diagnostics: fc.array(textSpec(MAX_DIAGNOSTIC_CHARS), { maxLength: 4 }),
    padding: pick(
      { weight: 5, arbitrary: fc.constant(0) },
      { weight: 1, arbitrary: fc.integer({ min: 1, max: MAX_HEALTH_DIAGNOSTICS + 10 }) },
    ),
  },
  { requiredKeys: ["kind", "status", "coverage", "watermark", "padding"] },
);

const errorBody: fc.Arbitrary<AnswerBody> = fc.record(
  {
    kind: fc.constant("error" as const),
    version: pick(
      { weight: 6, arbitrary: fc.constant("tracefetch.provider-error.v1") },
      { weight: 1, arbitrary: fc.constant("other.v1") },
    ),
    code: fc.constantFrom(...PROVIDER_ERROR_CODES, "teapot"),
    message: textSpec(MAX_DIAGNOSTIC_CHARS),
    retry_after_ms: fc.constantFrom<Wire>(0, 1_500, MAX_PROVIDER_WAIT_MS + 1, -1, "x", 1.5, null),
    retryable: fc.constantFrom<Wire>(false, true, "no", null),
  },
  { requiredKeys: ["kind", "version", "code"] },
);

const INVALID_JSON = ["<html>", " ", "{", "nul", "[1,]", "{'a':1}", "NaN", '{"a":1}}', "\u0000"];

const bodyFor = (action: "expand" | "refresh") => {
  const own = action === "expand" ? evidenceBody : healthBody;
  const other: fc.Arbitrary<AnswerBody> = action === "expand" ? healthBody : evidenceBody;
  const mutated: fc.Arbitrary<AnswerBody> = action === "expand"
    ? fc.tuple(evidenceBody, evidenceMutation).map(([b, mutation]) => ({ ...b, mutation }))
    : fc.tuple(healthBody, healthMutation).map(([b, mutation]) => ({ ...b, mutation }));
  return pick<AnswerBody>(
    { weight: 30, arbitrary: own },
    { weight: 10, arbitrary: mutated },
    { weight: 2, arbitrary: other },
    { weight: 8, arbitrary: errorBody },
    {
      weight: 2,
      arbitrary: fc.constantFrom(...INVALID_JSON).map((text): AnswerBody => ({
        kind: "invalid-json",
        text,
      })),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom<number[]>([0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80]).map((
        bytes,
      ): AnswerBody => ({ kind: "invalid-utf8", bytes })),
    },
    { weight: 1, arbitrary: fc.constant<AnswerBody>({ kind: "empty" }) },
  );
};

const status = pick(
  { weight: 40, arbitrary: fc.constant(200) },
  { weight: 2, arbitrary: fc.constantFrom(201, 203, 299) },
  { weight: 1, arbitrary: fc.constantFrom(204, 205) },
  { weight: 2, arbitrary: fc.constantFrom(301, 302, 304, 307) },
  {
    weight: 10,
    arbitrary: fc.constantFrom(400, 401, 403, 404, 405, 408, 410, 429, 500, 501, 502, 503),
  },
  { weight: 2, arbitrary: fc.integer({ min: 400, max: 599 }) },
);

const OTHER_TYPES = [
  "text/html; charset=utf-8",
  "text/plain",
  "application/x-ndjson",
  "",
  `text/html; token=${GHP_TOKEN}`,
  "application/xml; api_key=S3CRET",
];
const contentType = pick(
  { weight: 14, arbitrary: fc.constantFrom(...JSON_TYPES) },
  { weight: 2, arbitrary: fc.constantFrom<string | null>(null, ...OTHER_TYPES) },
);

const encoding = pick<Encoding>(
  { weight: 20, arbitrary: fc.constant("none" as const) },
  { weight: 4, arbitrary: fc.constant("gzip" as const) },
  {
    weight: 1,
    arbitrary: fc.constantFrom("gzip-unlabelled" as const, "gzip-mislabelled" as const),
  },
);

const extraHeaders = fc.subarray<[string, string]>([
  ["retry-after", "3"],
  ["x-upstream-secret", GHP_TOKEN],
  ["set-cookie", "session=S3CRET"],
  ["www-authenticate", "Bearer s3cr3tZ"],
  ["x-debug", `${JWT} ${PEM.replace(/\n/g, " ")}`],
]);

export const actionAnswer: fc.Arbitrary<ActionAnswerSpec> = fc
  .constantFrom("expand" as const, "refresh" as const)
  .chain((action) =>
    fc.record({
      action: fc.constant(action),
      asked: fc.nat(ASKED_LOCATORS.length - 1),
      status,
      contentType,
      encoding,
      body: bodyFor(action),
      headers: extraHeaders,
      ending: pick(
        { weight: 40, arbitrary: fc.constant("end" as const) },
        { weight: 1, arbitrary: fc.constant("reset" as const) },
      ),
    })
  );

// ---- The bytes ----

export const askedOf = (spec: ActionAnswerSpec) => ASKED_LOCATORS[spec.asked] as string;

function evidenceJson(b: EvidenceBody, asked: string): string {
  const m = b.mutation;
  if (m?.m === "body-null") return "null";
  const fields: Array<[string, Wire]> = [
    ["schema_version", m?.m === "wrong-version" ? m.value : PROVIDER_EXPAND_VERSION],
    ["provider", m?.m === "identity" && m.field === "provider" ? m.value : FUZZED],
    ["scope", m?.m === "identity" && m.field === "scope" ? m.value : FUZZED],
    ["locator", m?.m === "locator" ? m.value : asked],
    ["title", m?.m === "title-number" ? 7 : textOf(b.title)],
    ["text", m?.m === "text-null" ? null : textOf(b.text)],
    ["content_type", m?.m === "content-type" ? m.value : b.content_type],
    ["retrieved_at", m?.m === "retrieved-at" ? m.value : b.retrieved_at],
  ];
  if (m?.m === "revision") fields.push(["revision", m.value]);
  else if (b.revision !== undefined) fields.push(["revision", b.revision]);
  if (m?.m === "truncated-string") fields.push(["truncated", "yes"]);
  else if (b.truncated !== undefined) fields.push(["truncated", b.truncated]);
  if (m?.m === "unknown-field") fields.push([m.name, "x"]);
  const kept = m?.m === "missing" ? fields.filter(([k]) => k !== m.field) : fields;
  const text = wireText({ obj: kept });
  return m?.m === "body-array" ? `[${text}]` : text;
}

/** The diagnostics sent: the generated ones, then the padding. */
export function diagnosticsOf(b: HealthBody): string[] | undefined {
  if (b.diagnostics === undefined && b.padding === 0) return undefined;
  return [
    ...(b.diagnostics ?? []).map(textOf),
    ...Array.from({ length: b.padding }, (_, i) => `pad ${i}`),
  ];
}

function healthJson(b: HealthBody): string {
  const m = b.mutation;
  const fields: Array<[string, Wire]> = [
    ["schema_version", m?.m === "wrong-version" ? m.value : PROVIDER_HEALTH_VERSION],
    ["provider", m?.m === "identity" && m.field === "provider" ? m.value : FUZZED],
    ["scope", m?.m === "identity" && m.field === "scope" ? m.value : FUZZED],
    ["status", m?.m === "status" ? m.value : b.status],
    ["coverage", m?.m === "coverage" ? m.value : b.coverage],
    ["watermark", m?.m === "watermark" ? m.value : b.watermark],
  ];
  if (m?.m === "document-count") fields.push(["document_count", m.value]);
  else if (b.document_count !== undefined) fields.push(["document_count", b.document_count]);
  const diagnostics = diagnosticsOf(b);
  if (m?.m === "diagnostics") fields.push(["diagnostics", m.value]);
  else if (diagnostics !== undefined) fields.push(["diagnostics", diagnostics]);
  if (m?.m === "unknown-field") fields.push([m.name, "x"]);
  const kept = m?.m === "missing" ? fields.filter(([k]) => k !== m.field) : fields;
  return wireText({ obj: kept });
}

const encoder = new TextEncoder();

/** The body as the provider means it, before any encoding. */
export function plainBody(spec: ActionAnswerSpec): Uint8Array {
  const b = spec.body;
  switch (b.kind) {
    case "evidence":
      return encoder.encode(evidenceJson(b, askedOf(spec)));
    case "health":
      return encoder.encode(healthJson(b));
    case "error": {
      const fields: Array<[string, Wire]> = [["schema_version", b.version], ["code", b.code]];
      if (b.message !== undefined) fields.push(["message", textOf(b.message)]);
      if (b.retry_after_ms !== undefined) fields.push(["retry_after_ms", b.retry_after_ms]);
      if (b.retryable !== undefined) fields.push(["retryable", b.retryable]);
      return encoder.encode(wireText({ obj: fields }));
    }
    case "invalid-json":
      return encoder.encode(b.text);
    case "invalid-utf8": {
      const head = encoder.encode(evidenceJson(VALID_EVIDENCE, askedOf(spec)).slice(0, 60));
      const out = new Uint8Array(head.length + b.bytes.length);
      out.set(head);
      out.set(b.bytes, head.length);
      return out;
    }
    case "empty":
      return new Uint8Array(0);
  }
}

const VALID_EVIDENCE: EvidenceBody = {
  kind: "evidence",
  title: ["t"],
  text: ["x"],
  content_type: "text/plain",
  retrieved_at: RETRIEVED[0] as string,
};

/** What the `fuzzed` provider sends. */
export function scriptOf(spec: ActionAnswerSpec): Script {
  const plain = plainBody(spec);
  const gzipped = spec.encoding === "gzip" || spec.encoding === "gzip-unlabelled";
  const body = gzipped ? new Uint8Array(gzipSync(plain, { level: 1 })) : plain;
  const headers: Array<[string, string]> = [];
  if (spec.contentType !== null) headers.push(["content-type", spec.contentType]);
  if (spec.encoding === "gzip" || spec.encoding === "gzip-mislabelled") {
    headers.push(["content-encoding", "gzip"]);
  }
  headers.push(["content-length", String(body.length)], ...spec.headers);
  return { status: spec.status, headers, body, ending: spec.ending };
}

// ---- The oracle ----

/** What the gateway must answer: the evidence or health, or a failure envelope with one of `codes`. */
export type AnswerExpected =
  | { kind: "ok" }
  | { kind: "failure"; codes: string[] };

const failure = (...codes: string[]): AnswerExpected => ({ kind: "failure", codes });

function isJsonType(type: string | null): boolean {
  return type !== null && JSON_TYPES.includes(type);
}

/** Whether the body is a valid, untouched answer of the action asked. */
function validFor(spec: ActionAnswerSpec): boolean {
  const b = spec.body;
  if (spec.action === "expand") return b.kind === "evidence" && b.mutation === undefined;
  return b.kind === "health" && b.mutation === undefined;
}

/**
 * docs/protocol.md and docs/envelope.md: a redirect fails the provider; a 2xx is the answer only
 * when it is a complete JSON answer of the action (right type, within the cap, decodable, UTF-8,
 * the schema, the identity and, for expand, the locator asked); a refusal's readable
 * provider-error body decides by its code, else 404, 405 and 501 say "not implemented". A reset
 * after the head leaves a 2xx unusable and a refusal with no body to read: its status decides.
 */
export function expectedAnswer(spec: ActionAnswerSpec, plain: Uint8Array): AnswerExpected {
  const { status } = spec;
  if (status >= 300 && status < 400) return failure("provider_failed");
  if (status >= 400) {
    const b = spec.body;
    const decodes = spec.ending === "end" && (spec.encoding === "none" || spec.encoding === "gzip");
    const readable = decodes && plain.length <= MAX_ERROR_BODY_BYTES;
    const code = readable && b.kind === "error" && b.version === "tracefetch.provider-error.v1" &&
        (PROVIDER_ERROR_CODES as readonly string[]).includes(b.code)
      ? b.code
      : null;
    if (code === "unsupported_action") return failure("action_unsupported");
    if (code === "locator_unknown" || code === "locator_expired") {
      return spec.action === "expand" ? failure(code) : failure("provider_failed");
    }
    if (code === null && (status === 404 || status === 405 || status === 501)) {
      return failure("action_unsupported");
    }
    return failure("provider_failed");
  }
  if (spec.ending === "reset") return failure("provider_failed");
  if (status === 204 || status === 205) return failure("provider_failed");
  if (!isJsonType(spec.contentType)) return failure("provider_failed");
  if (spec.encoding === "gzip-mislabelled" || spec.encoding === "gzip-unlabelled") {
    return failure("provider_failed");
  }
  if (plain.length > MAX_PROVIDER_BODY_BYTES) return failure("provider_failed");
  return validFor(spec) ? { kind: "ok" } : failure("provider_failed");
}
