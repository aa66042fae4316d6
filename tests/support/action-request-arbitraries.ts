/**
 * Generated requests to `POST /v1/expand` and `POST /v1/refresh` (docs/envelope.md, "Other
 * routes"), and what the gateway must answer each: a body of members (valid ones, wrong types,
 * nulls, unknown fields, `__proto__`, repeated keys, blank, long and lone-surrogate strings, nested
 * objects that repeat a key), a body that is not an object or not JSON, damage to its bytes
 * (truncated, bytes that are not UTF-8, a BOM), a content type, and a caller's token.
 *
 * The expected answer is written from the documents, not from the parser: a defect the request
 * carries maps to the codes docs/envelope.md gives it, and a request with several defects may be
 * refused for any one of them. A request without defects gets exactly one answer, computed from
 * the providers of tests/support/action-fuzz-fixture.ts.
 */
import fc from "fast-check";
import {
  MAX_LOCATOR_CHARS,
  MAX_NAME_CHARS,
  MAX_REQUEST_BODY_BYTES,
} from "../../src/protocol/limits.ts";
import { pick } from "./fuzz-text-arbitraries.ts";
import { SECRETS } from "./fuzz-secrets.ts";
import {
  hasLoneSurrogate,
  hasRepeatedKey,
  longString,
  points,
  type Wire,
  wireText,
  wireValue,
} from "./fuzz-wire.ts";
import { type FixtureDoc, NOTES, NOTES_DOCS, VAULT, VAULT_DOCS } from "./action-fuzz-fixture.ts";

/**
 * The caller's token: none, one granting `tracefetch-admin`, one granting the vault provider's
 * scope, one granting both, or a token that fails verification.
 */
export type TokenKind = "none" | "admin" | "reader" | "both" | "invalid";

export type Damage =
  | { kind: "none" }
  /** The text cut at this permille of its length (a strict prefix of JSON is never JSON here). */
  | { kind: "truncate"; at: number }
  /** Bytes that are not UTF-8 wherever they stand, inserted at this permille of the text. */
  | { kind: "bytes"; bytes: number[]; at: number }
  /** A byte order mark in front (stripped) or white space behind (JSON allows it): harmless. */
  | { kind: "bom" }
  | { kind: "space" };

export type RequestBody =
  | { kind: "object"; members: Array<[string, Wire]> }
  /** JSON, but not one object: an array, a string, a number, null. */
  | { kind: "other"; value: Wire }
  /** Text that is not JSON. */
  | { kind: "text"; text: string };

export type ActionRequestSpec = {
  route: "expand" | "refresh";
  token: TokenKind;
  /** The content-type header (null: none) and whether docs/envelope.md accepts it as JSON. */
  contentType: { value: string | null; json: boolean };
  body: RequestBody;
  damage: Damage;
};

/** What the gateway must answer a request. */
export type Expected = {
  /** The envelope codes it may answer with (one, unless the request has several defects). */
  codes: string[];
  /** Fields `error.field` may name, when the refusal names one. */
  fields?: string[];
  /** Whether the request may reach a provider; a refused request never does. */
  reachesProvider: boolean;
  /** A successful expand's document, or a successful refresh's provider. */
  evidence?: FixtureDoc;
  health?: { documents: number };
};

// ---- Generators ----

const CONTENT_TYPES: ReadonlyArray<{ value: string | null; json: boolean }> = [
  { value: "application/json", json: true },
  { value: "application/json; charset=utf-8", json: true },
  { value: "APPLICATION/JSON", json: true },
  { value: 'application/json; charset="utf-8"', json: true },
  { value: "application/json;charset=UTF-8", json: true },
  { value: null, json: false },
  { value: "", json: false },
  { value: "text/plain", json: false },
  { value: "application/json; charset=latin1", json: false },
  { value: "application/x-www-form-urlencoded", json: false },
  { value: "application/jsonl", json: false },
  { value: "multipart/form-data; boundary=x", json: false },
  { value: "application/json, text/plain", json: false },
];
const contentType = pick(
  { weight: 24, arbitrary: fc.constantFrom(...CONTENT_TYPES.filter((c) => c.json)) },
  { weight: 2, arbitrary: fc.constantFrom(...CONTENT_TYPES.filter((c) => !c.json)) },
);

/** Code units of awkward text: astral, combining, invisible, NUL, controls, a lone surrogate. */
const UNITS = ["a", "Z", "0", "-", "/", ".", ":", "é", "😀", "\u0301", " ", "\t", "\n", "\u200b"];
const text = pick(
  { weight: 12, arbitrary: fc.string({ unit: fc.constantFrom(...UNITS), maxLength: 16 }) },
  { weight: 1, arbitrary: fc.constantFrom("\ud800", "a\udfffb", "\ud83d") },
  { weight: 1, arbitrary: fc.constantFrom(...SECRETS.map((s) => s.planted)) },
);
const blank = fc.constantFrom("", " ", "\t", "\u00a0", "\u200b", "\n \n");

/** A long string around a bound: `unit` repeated, each at most MAX_REQUEST_BODY_BYTES + 64 bytes. */
const long = (counts: number[]) =>
  fc.tuple(fc.constantFrom("a", "😀", "é"), fc.constantFrom(...counts)).map((
    [unit, n],
  ): Wire => ({ long: unit, n }));

const scalar: fc.Arbitrary<Wire> = pick(
  { weight: 4, arbitrary: text },
  { weight: 2, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
  { weight: 1, arbitrary: fc.constantFrom<Wire>(null, true, false) },
  {
    weight: 1,
    arbitrary: fc.constantFrom("1e400", "-0", "123456789012345678901234567890").map((
      raw,
    ): Wire => ({
      raw,
    })),
  },
);
const nestedKey = pick(
  { weight: 6, arbitrary: fc.stringMatching(/^[a-z_]{1,8}$/) },
  { weight: 1, arbitrary: fc.constantFrom("__proto__", "constructor", "provider", "\ud800") },
);
/** Arrays and objects, which may repeat a key, down to depth 3. */
const nested: fc.Arbitrary<Wire> = fc.letrec<{ value: Wire }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    scalar,
    fc.array(tie("value"), { maxLength: 3 }),
    fc.array(fc.tuple(nestedKey, tie("value")), { maxLength: 3 }).map((obj): Wire => ({ obj })),
    // The same key twice, inside a nested object: invalid_json (docs/envelope.md).
    fc.tuple(nestedKey, tie("value"), tie("value")).map(([k, a, b]): Wire => ({
      obj: [[k, a], [k, b]],
    })),
  ),
})).value;
const anyValue = pick({ weight: 3, arbitrary: scalar }, { weight: 1, arbitrary: nested });

const ALL_LOCATORS = [...NOTES_DOCS, ...VAULT_DOCS].map((d) => d.locator);
const providerName = pick<Wire>(
  { weight: 16, arbitrary: fc.constantFrom(NOTES, VAULT) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      "nope",
      "Notes",
      " notes",
      "notes ",
      "fuzzed-elsewhere",
      "n".repeat(MAX_NAME_CHARS),
      "n".repeat(MAX_NAME_CHARS + 1),
    ),
  },
  { weight: 1, arbitrary: blank },
  { weight: 1, arbitrary: anyValue },
);
const locator = pick<Wire>(
  { weight: 16, arbitrary: fc.constantFrom(...ALL_LOCATORS) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      "https://notes.example/never",
      "https://notes.example/deadlines?x=1",
      "HTTPS://NOTES.EXAMPLE/deadlines",
      "x",
    ),
  },
  { weight: 1, arbitrary: blank },
  {
    weight: 2,
    arbitrary: long([MAX_LOCATOR_CHARS - 1, MAX_LOCATOR_CHARS, MAX_LOCATOR_CHARS + 1]),
  },
  { weight: 2, arbitrary: anyValue },
);

const unknownKey = pick(
  {
    weight: 6,
    arbitrary: fc.constantFrom(
      "url",
      "revision",
      "query",
      "Provider",
      "provider ",
      "locator\u200b",
      "limit",
      "pretty",
    ),
  },
  { weight: 3, arbitrary: fc.constantFrom("__proto__", "constructor", "toString") },
  { weight: 1, arbitrary: fc.constantFrom("", "\ud800", "😀") },
);
/** An unknown member, now and then with a value large enough to reach the body's cap. */
const unknownMember = fc.tuple(
  unknownKey,
  pick<Wire>(
    { weight: 8, arbitrary: anyValue },
    {
      weight: 1,
      arbitrary: long([100_000, MAX_REQUEST_BODY_BYTES - 64, MAX_REQUEST_BODY_BYTES + 64]),
    },
  ),
);

/** Each member present (mostly), absent, null, or given twice. */
const field = (name: string, value: fc.Arbitrary<Wire>) =>
  pick<Array<[string, Wire]>>(
    { weight: 24, arbitrary: value.map((v): Array<[string, Wire]> => [[name, v]]) },
    { weight: 1, arbitrary: fc.constant([]) },
    { weight: 1, arbitrary: fc.constant<Array<[string, Wire]>>([[name, null]]) },
    {
      weight: 1,
      arbitrary: fc.tuple(value, value).map(([a, b]): Array<[string, Wire]> => [[name, a], [
        name,
        b,
      ]]),
    },
  );

/** Members in a generated order: `order` ranks them, so a shrink keeps the order of the rest. */
const objectBody = (route: "expand" | "refresh") =>
  fc.tuple(
    field("provider", providerName),
    route === "expand" ? field("locator", locator) : fc.constant<Array<[string, Wire]>>([]),
    pick<Array<[string, Wire]>>(
      { weight: 6, arbitrary: fc.constant([]) },
      { weight: 1, arbitrary: fc.array(unknownMember, { minLength: 1, maxLength: 2 }) },
    ),
    fc.array(fc.nat(), { minLength: 6, maxLength: 6 }),
  ).map(([provider, loc, extra, order]): RequestBody => {
    const members = [...provider, ...loc, ...extra];
    const ranked = members.map((m, i) => ({ m, rank: order[i % order.length] ?? 0, i }));
    ranked.sort((a, b) => a.rank - b.rank || a.i - b.i);
    return { kind: "object", members: ranked.map((r) => r.m) };
  });

const NOT_JSON = [
  "",
  " ",
  "{",
  "nul",
  "[1,]",
  "{'provider':'notes'}",
  "NaN",
  '{"provider":"notes"}}',
  '{"provider":"notes",}',
  '{"provider" "notes"}',
  "\u0000",
  "<html>",
  "provider=notes",
];
const body = (route: "expand" | "refresh") =>
  pick<RequestBody>(
    { weight: 20, arbitrary: objectBody(route) },
    {
      weight: 1,
      arbitrary: pick<Wire>(
        fc.array(scalar, { maxLength: 2 }),
        scalar,
        fc.constant<Wire>([{ obj: [["provider", NOTES]] }]),
      ).map((value): RequestBody => ({ kind: "other", value })),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(...NOT_JSON).map((t): RequestBody => ({ kind: "text", text: t })),
    },
  );

const damage = pick<Damage>(
  { weight: 24, arbitrary: fc.constant<Damage>({ kind: "none" }) },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 0, max: 999 }).map((at): Damage => ({ kind: "truncate", at })),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("bytes" as const),
      bytes: fc.constantFrom<number[]>([0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82], [
        0xfe,
      ]),
      at: fc.integer({ min: 0, max: 1000 }),
    }),
  },
  { weight: 1, arbitrary: fc.constantFrom<Damage>({ kind: "bom" }, { kind: "space" }) },
);

const token = pick<TokenKind>(
  { weight: 8, arbitrary: fc.constant("none" as const) },
  { weight: 10, arbitrary: fc.constantFrom("admin" as const, "reader" as const, "both" as const) },
  { weight: 1, arbitrary: fc.constant("invalid" as const) },
);

export const actionRequest: fc.Arbitrary<ActionRequestSpec> = fc
  .constantFrom("expand" as const, "refresh" as const)
  .chain((route) =>
    fc.record({
      route: fc.constant(route),
      token,
      contentType,
      body: body(route),
      damage,
    })
  );

// ---- The bytes ----

const encoder = new TextEncoder();

/** The JSON text of the body, before damage. */
export function bodyText(b: RequestBody): string {
  switch (b.kind) {
    case "object":
      return wireText({ obj: b.members });
    case "other":
      return wireText(b.value);
    case "text":
      return b.text;
  }
}

/** Where a permille of `text` falls, moved back to the start of a code point. */
function boundary(text: string, permille: number): number {
  let at = Math.floor((text.length * permille) / 1000);
  const unit = text.charCodeAt(at);
  if (at > 0 && at < text.length && unit >= 0xdc00 && unit <= 0xdfff) at--;
  return at;
}

/** The bytes sent. */
export function requestBytes(spec: ActionRequestSpec): Uint8Array {
  const text = bodyText(spec.body);
  const d = spec.damage;
  switch (d.kind) {
    case "none":
      return encoder.encode(text);
    case "truncate":
      // Strictly shorter: never the whole text.
      return encoder.encode(text.slice(0, Math.min(boundary(text, d.at), text.length - 1)));
    case "bytes": {
      const at = boundary(text, d.at);
      const head = encoder.encode(text.slice(0, at));
      const tail = encoder.encode(text.slice(at));
      const out = new Uint8Array(head.length + d.bytes.length + tail.length);
      out.set(head);
      out.set(d.bytes, head.length);
      out.set(tail, head.length + d.bytes.length);
      return out;
    }
    case "bom":
      return encoder.encode(`\ufeff${text}`);
    case "space":
      return encoder.encode(`${text} \n\t`);
  }
}

// ---- The oracle ----

const NAMES = new Set([NOTES, VAULT]);
const DOCS_OF: Record<string, readonly FixtureDoc[]> = { [NOTES]: NOTES_DOCS, [VAULT]: VAULT_DOCS };

/** The one code of a gateway refusal that reaches no provider. */
const refused = (code: string, fields?: string[]): Expected => ({
  codes: [code],
  reachesProvider: false,
  ...(fields === undefined ? {} : { fields }),
});

/** What docs/envelope.md says of a field's value: its defect's code, or null when it is valid. */
function valueDefect(name: "provider" | "locator", w: Wire): string | null {
  if (w === null) return "null_field";
  if (typeof w === "string") {
    if (w.length === 0) return "invalid_field";
    if (name === "provider") return w.length > MAX_NAME_CHARS ? "invalid_field" : null;
    return points(w) > MAX_LOCATOR_CHARS ? "invalid_field" : null;
  }
  if (typeof w === "object" && !Array.isArray(w) && "long" in w) {
    const n = name === "provider" ? longString(w.long, 1).length * w.n : points(w);
    const max = name === "provider" ? MAX_NAME_CHARS : MAX_LOCATOR_CHARS;
    return n === 0 ? "invalid_field" : n > max ? "invalid_field" : null;
  }
  return "invalid_field";
}

/**
 * What the gateway must answer: a token that fails verification first (before any route), then
 * the content type, the body's size, its bytes, its JSON, its fields; a request without defects
 * is answered by the route's rules over the fixture's providers.
 */
export function expectedOf(spec: ActionRequestSpec, bytes: Uint8Array): Expected {
  if (spec.token === "invalid") return refused("token_invalid");
  if (!spec.contentType.json) return refused("unsupported_media_type");
  if (bytes.length > MAX_REQUEST_BODY_BYTES) return refused("body_too_large");
  const d = spec.damage;
  if (d.kind === "bytes") return refused("invalid_utf8");
  const b = spec.body;
  if (d.kind === "truncate" || b.kind !== "object") return refused("invalid_json");

  const codes = new Set<string>();
  const fields = new Set<string>();
  const members = b.members;
  if (members.some(([k, v]) => hasLoneSurrogate(k) || hasLoneSurrogate(v))) {
    codes.add("invalid_utf8");
  }
  if (members.some(([, v]) => hasRepeatedKey(v))) codes.add("invalid_json");
  const known = spec.route === "expand" ? ["provider", "locator"] : ["provider"];
  for (const [k] of members) {
    if (!known.includes(k)) {
      codes.add("unknown_field");
      fields.add(k);
    }
  }
  for (const name of known) {
    const given = members.filter(([k]) => k === name).map(([, v]) => v);
    if (given.length > 1) {
      codes.add("invalid_field");
      fields.add(name);
    }
    if (given.length === 0) {
      codes.add("invalid_field");
      fields.add(name);
    }
    for (const v of given) {
      const defect = valueDefect(name as "provider" | "locator", v);
      if (defect !== null) {
        codes.add(defect);
        fields.add(name);
      }
    }
  }
  if (codes.size > 0) return { codes: [...codes], fields: [...fields], reachesProvider: false };

  const value = wireValue({ obj: members }) as { provider: string; locator?: string };
  return spec.route === "expand" ? expandAnswer(spec.token, value) : refreshAnswer(spec, value);
}

function expandAnswer(token: TokenKind, value: { provider: string; locator?: string }): Expected {
  const { provider } = value;
  if (!NAMES.has(provider)) return refused("unknown_provider", ["provider"]);
  if (provider === VAULT && token === "none") return refused("unauthorized", ["provider"]);
  if (provider === VAULT && token === "admin") return refused("insufficient_scope", ["provider"]);
  const doc = (DOCS_OF[provider] ?? []).find((d) => d.locator === value.locator);
  if (doc === undefined) return { codes: ["locator_unknown"], reachesProvider: true };
  return { codes: ["ok"], reachesProvider: true, evidence: doc };
}

function refreshAnswer(spec: ActionRequestSpec, value: { provider: string }): Expected {
  if (spec.token === "none") return refused("unauthorized");
  if (spec.token === "reader") return refused("forbidden");
  const { provider } = value;
  if (!NAMES.has(provider)) return refused("unknown_provider", ["provider"]);
  if (provider === VAULT && spec.token === "admin") {
    return refused("insufficient_scope", ["provider"]);
  }
  return {
    codes: ["ok"],
    reachesProvider: true,
    health: { documents: (DOCS_OF[provider] ?? []).length },
  };
}
