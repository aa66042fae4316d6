import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import fc from "fast-check";
import { answer, startServer, type TestServer } from "./support/servers.ts";
import { createGateway } from "../src/http/mod.ts";
import { gateway, manifestOf, runtimePorts, settingsFor } from "./support/gateway.ts";

/**
 * Property: a search request written as GET parameters and as a POST body gets the same HTTP status,
 * code and error.field, for generated requests valid and not: edge numbers, invisible and
 * non-UTF-8 text, lone surrogates, unknown and repeated fields, filters, in any order.
 *
 * By default (`npm test`) it runs up to 10,000 requests or 30 s, whichever comes first, and fails
 * below 2,000 (2,800 to 10,000 on a busy two-core machine; it prints its count); `npm run fuzz`
 * runs 100,000.
 * TRACEFETCH_FUZZ_RUNS sets the number of runs (and lifts the time limit, unless
 * TRACEFETCH_FUZZ_SECONDS sets one); TRACEFETCH_FUZZ_SEED replays a seed.
 */

const env = (name: string) => {
  const value = process.env[name];
  return value === undefined || value === "" ? undefined : Number(value);
};
const FUZZ_RUNS = env("TRACEFETCH_FUZZ_RUNS");
const RUNS = FUZZ_RUNS ?? 10_000;
const SECONDS = env("TRACEFETCH_FUZZ_SECONDS") ?? (FUZZ_RUNS === undefined ? 30 : undefined);
const MIN_RUNS = Math.min(2_000, RUNS);
const SEED = env("TRACEFETCH_FUZZ_SEED");

// ---- The request model: text as segments, so that raw bytes can sit between characters. ----

/** A piece of text, or raw bytes (percent-encoded in GET, sent as they are in the body). */
type Segment = string | Uint8Array;
/** A field value: text, or a JSON number written the same way in both forms, or a list. */
type Value =
  | { kind: "text"; segments: Segment[] }
  | { kind: "number"; lexeme: string }
  | { kind: "list"; items: Segment[][] };
type Entry = { key: string; value: Value };

const utf8 = (text: string) => new TextEncoder().encode(text);

/** Text as UTF-8, a lone surrogate as the three bytes it would have (which are not UTF-8). */
function looseUtf8(text: string): number[] {
  const out: number[] = [];
  for (const ch of text) {
    const cp = ch.codePointAt(0) as number;
    if (cp >= 0xd800 && cp <= 0xdfff) {
      out.push(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
    } else {
      out.push(...utf8(ch));
    }
  }
  return out;
}

/** Adjacent text segments joined, so a surrogate pair split across two stays a pair. */
function merged(segments: Segment[]): Segment[] {
  const out: Segment[] = [];
  for (const s of segments) {
    const last = out[out.length - 1];
    if (typeof s === "string" && typeof last === "string") out[out.length - 1] = last + s;
    else out.push(s);
  }
  return out;
}

/** The bytes a GET parameter decodes to. */
function getBytes(segments: Segment[]): number[] {
  return merged(segments).flatMap((s) => typeof s === "string" ? looseUtf8(s) : [...s]);
}

/** The bytes of a JSON string: JSON.stringify escapes a lone surrogate as `\udxxx`. */
function jsonStringBytes(segments: Segment[]): number[] {
  const inner = merged(segments).flatMap((s) =>
    typeof s === "string" ? [...utf8(JSON.stringify(s).slice(1, -1))] : [...s]
  );
  return [0x22, ...inner, 0x22];
}

const UNRESERVED = /[A-Za-z0-9\-._~]/;

/** Percent-encodes bytes; a space is `+` or `%20` as the case chose. */
function percentEncode(bytes: number[], plus: boolean): string {
  return bytes.map((b) => {
    if (b === 0x20 && plus) return "+";
    const ch = String.fromCharCode(b);
    return b < 0x80 && UNRESERVED.test(ch)
      ? ch
      : `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
  }).join("");
}

/** Byte lists joined by commas. */
const commaJoined = (parts: number[][]) => parts.flatMap((p, i) => (i === 0 ? p : [0x2c, ...p]));

function getValueBytes(value: Value): number[] {
  switch (value.kind) {
    case "text":
      return getBytes(value.segments);
    case "number":
      return [...utf8(value.lexeme)];
    case "list":
      return commaJoined(value.items.map(getBytes));
  }
}

function postValueBytes(value: Value): number[] {
  switch (value.kind) {
    case "text":
      return jsonStringBytes(value.segments);
    case "number":
      return [...utf8(value.lexeme)];
    case "list":
      return [0x5b, ...commaJoined(value.items.map(jsonStringBytes)), 0x5d];
  }
}

/** The GET form: `query` is `q`; every other field has its own name. */
const getName = (key: string) => (key === "query" ? "q" : key);

function getQuery(entries: Entry[], plus: boolean): string {
  return entries.map((e) =>
    `${percentEncode(looseUtf8(getName(e.key)), plus)}=${
      percentEncode(getValueBytes(e.value), plus)
    }`
  ).join("&");
}

/** The GET filter parameters and where the body writes each: in `filters`, or in its `domains`. */
const FILTER_PATHS: Record<string, [string, string]> = {
  domains: ["domains", "include"],
  exclude_domains: ["domains", "exclude"],
  published_after: ["", "published_after"],
  published_before: ["", "published_before"],
};
const isFilter = (key: string) => Object.hasOwn(FILTER_PATHS, key);

const member = (key: string, value: number[]) => [...jsonStringBytes([key]), 0x3a, ...value];
const object = (members: number[][]) => [0x7b, ...commaJoined(members), 0x7d];

/** The body's `filters` object for the filter parameters (each given at most once). */
function filtersBytes(entries: Entry[]): number[] {
  const at = (e: Entry) => FILTER_PATHS[e.key] as [string, string];
  const domains = entries.filter((e) => at(e)[0] === "domains");
  const members = entries.filter((e) => at(e)[0] === "").map((e) =>
    member(at(e)[1], postValueBytes(e.value))
  );
  if (domains.length > 0) {
    members.unshift(
      member("domains", object(domains.map((e) => member(at(e)[1], postValueBytes(e.value))))),
    );
  }
  return object(members);
}

/** The body: the filter parameters become one `filters` member where the first of them stood. */
function postBody(entries: Entry[]): Uint8Array<ArrayBuffer> {
  const members: number[][] = [];
  const filters = entries.filter((e) => isFilter(e.key));
  for (const e of entries) {
    if (!isFilter(e.key)) members.push(member(e.key, postValueBytes(e.value)));
    else if (e === filters[0]) members.push(member("filters", filtersBytes(filters)));
  }
  return new Uint8Array(object(members));
}

// ---- Generators ----

const INVISIBLE = [
  " ",
  "\t",
  "\n",
  "\u0000",
  "\u00A0",
  "\u00AD",
  "\u200B",
  "\u200C",
  "\u200D",
  "\u200E",
  "\u2060",
  "\u2066",
  "\u3000",
  "\u3164",
  "\uFE0F",
  "\uFEFF",
  "\u{E0041}",
];
/** Raw bytes: some not UTF-8 on their own (FF, a lone continuation, a lead without its tail). */
const RAW_BYTES = [[0xff], [0xfe], [0x80], [0xc3], [0xc3, 0xa9], [0xed, 0xa0, 0x80], [0xc0, 0xaf], [
  0xef,
  0xbb,
  0xbf,
]];

const textPiece = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constantFrom(
      "deadline",
      "x",
      "a b",
      "é",
      "😀",
      "100%",
      "a+b",
      "a,b",
      '"',
      "\\",
      "=",
      "&",
    ),
  },
  { weight: 4, arbitrary: fc.constantFrom(...INVISIBLE) },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 6 }) },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 6 }) },
  { weight: 1, arbitrary: fc.constantFrom("\uD800", "\uDC00", "\uD83D", "\uDE00") },
  { weight: 1, arbitrary: fc.constantFrom("q".repeat(1999), "\u200B".repeat(2001)) },
);
const segment: fc.Arbitrary<Segment> = fc.oneof(
  { weight: 24, arbitrary: textPiece },
  { weight: 1, arbitrary: fc.constantFrom(...RAW_BYTES).map((b) => new Uint8Array(b)) },
);
const segments = (max: number) => fc.array(segment, { maxLength: max });
const text = (segs: fc.Arbitrary<Segment[]>): fc.Arbitrary<Value> =>
  segs.map((s) => ({ kind: "text", segments: s }));
const named = (...names: string[]) => text(fc.constantFrom(...names).map((n) => [n]));

const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const numberValue: fc.Arbitrary<Value> = fc.oneof(
  fc.constantFrom(
    "1",
    "8",
    "100",
    "101",
    "0",
    "-0",
    "-1",
    "1.5",
    "1e2",
    "1E2",
    "1e+2",
    "1e-2",
    "100.0",
    "1e308",
    "1e309",
    "3e5",
    "300000",
    "300001",
    "9".repeat(40),
    "1" + "0".repeat(400),
  ),
  fc.integer({ min: -10, max: 400_000 }).map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map(String).filter((s) =>
    JSON_NUMBER.test(s)
  ),
).map((lexeme) => ({ kind: "number", lexeme }));
/** Text a number field might get that is not a JSON number (the same text is a string in JSON). */
const notNumberText: fc.Arbitrary<Value> = fc.oneof(
  fc.constantFrom(
    "NaN",
    "Infinity",
    "-Infinity",
    " 5",
    "5 ",
    "+5",
    "0x10",
    "05",
    "",
    ".5",
    "5.",
    "1e",
    "1_000",
    "١٢",
    "five",
  ).map((s) => [s]),
  segments(3),
).filter((s) => !(s.every((p) => typeof p === "string") && JSON_NUMBER.test(s.join("")))).map((
  s,
) => ({ kind: "text", segments: s }));

const PROVIDER_NAMES = ["papers", "code", "vault", "ghost", "", " papers", "p".repeat(65)];
const providerItem: fc.Arbitrary<Segment[]> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...PROVIDER_NAMES).map((n) => [n]) },
  { weight: 1, arbitrary: segments(2) },
);
/** A list; GET writes it joined by commas, so no item may hold one, and [""] reads as []. */
const listValue: fc.Arbitrary<Value> = fc.array(providerItem, { maxLength: 3 })
  .filter((items) => items.every((i) => !getBytes(i).includes(0x2c)))
  .filter((items) => !(items.length === 1 && getBytes(items[0] as Segment[]).length === 0))
  .map((items) => ({ kind: "list", items }));

const HOST_NAMES = [
  "x.org",
  "www.y.org",
  "a-b.c.org",
  "1.2.3.4",
  "xn--bcher-kva.de",
  "X.org",
  "x..org",
  "-x.org",
  "x.org.",
  "x.org:80",
  "",
  " x.org",
  "é.org",
  `${"a".repeat(64)}.org`,
];
const hostItem: fc.Arbitrary<Segment[]> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...HOST_NAMES).map((n) => [n]) },
  { weight: 1, arbitrary: segments(2) },
);
/** A host list, written as GET writes it: see listValue. */
const hostList: fc.Arbitrary<Value> = fc.array(hostItem, { maxLength: 3 })
  .filter((items) => items.every((i) => !getBytes(i).includes(0x2c)))
  .filter((items) => !(items.length === 1 && getBytes(items[0] as Segment[]).length === 0))
  .map((items) => ({ kind: "list", items }));
const dateValue: fc.Arbitrary<Value> = fc.oneof(
  {
    weight: 4,
    arbitrary: named(
      "2025-01-01",
      "2025-12-31",
      "2024-02-29",
      "2025-02-29",
      "2025-1-1",
      "",
      "2025-01-01T00:00:00Z",
      "0000-01-01",
      "9999-12-31",
    ),
  },
  { weight: 1, arbitrary: text(segments(2)) },
);
/** Filter parameters, each at most once: a repeated one is refused by GET as a repeated parameter
 * and by a body as a repeated key of a nested object, with different codes on purpose. */
const filterEntries: fc.Arbitrary<Entry[]> = fc.uniqueArray(
  fc.constantFrom(...Object.keys(FILTER_PATHS)).chain((key) =>
    (key.endsWith("domains") ? hostList : dateValue).map((value) => ({ key, value }))
  ),
  { selector: (e) => e.key, maxLength: 3 },
);

/** Names neither form knows (GET's `q` is the body's `query`, and only GET has `stream`). */
const UNKNOWN = [
  "colour",
  "Q",
  "LIMIT",
  "limit ",
  "",
  "1",
  "constructor",
  "__proto__",
  "toString",
  "é",
  "\uD800",
  "query\u200B",
];

const valueFor = (key: string): fc.Arbitrary<Value> => {
  switch (key) {
    case "query":
      return fc.oneof({ weight: 3, arbitrary: named("deadline", "x", "a b") }, {
        weight: 4,
        arbitrary: text(segments(4)),
      });
    case "scope":
      return fc.oneof(
        named("papers", "code", "auto", "public", "local", "nowhere", "", "s".repeat(65)),
        text(segments(2)),
      );
    case "tier":
      return fc.oneof(named("fast", "turbo", ""), text(segments(2)));
    case "view":
      return fc.oneof(named("full", "merged", "", "Full"), text(segments(2)));
    case "providers":
      return listValue;
    case "limit":
    case "timeout_ms":
      return fc.oneof({ weight: 3, arbitrary: numberValue }, {
        weight: 1,
        arbitrary: notNumberText,
      });
    default:
      return fc.oneof(text(segments(2)), numberValue);
  }
};

const FIELDS = ["scope", "providers", "limit", "tier", "view", "timeout_ms"];
const entry: fc.Arbitrary<Entry> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...FIELDS) },
  { weight: 1, arbitrary: fc.constant("query") },
  { weight: 1, arbitrary: fc.constantFrom(...UNKNOWN) },
).chain((key) => valueFor(key).map((value) => ({ key, value })));

const requestArb = fc.record({
  query: fc.option(valueFor("query"), { freq: 8, nil: null }),
  rest: fc.array(entry, { maxLength: 4 }),
  filters: fc.option(
    fc.record({
      entries: filterEntries,
      places: fc.array(fc.nat(), { minLength: 3, maxLength: 3 }),
    }),
    { freq: 3, nil: null },
  ),
  at: fc.nat(),
  plus: fc.boolean(),
}).map(({ query, rest, filters, at, plus }) => {
  const entries = [...rest];
  for (const [i, e] of (filters?.entries ?? []).entries()) {
    entries.splice((filters?.places[i] ?? 0) % (entries.length + 1), 0, e);
  }
  if (query !== null) entries.splice(at % (entries.length + 1), 0, { key: "query", value: query });
  return { entries, plus };
});

// ---- The property ----

let servers: TestServer[] = [];
let app: ReturnType<typeof gateway>;

before(async () => {
  const hit = [{ title: "hit", locator: "https://x.org/a" }];
  servers = [
    await startServer(answer("papers", "papers", hit)),
    await startServer(answer("code", "code", hit)),
    await startServer(answer("vault", "vault", hit)),
  ];
  const [papers, code, vault] = servers.map((s) => s.url);
  const providers = [
    { name: "papers", endpoint: papers },
    { name: "code", endpoint: code, cost_micros: 5_000 },
    { name: "vault", endpoint: vault, isolated: true },
  ];
  const manifest = manifestOf(providers, { tiers: { fast: { cost_ceiling_micros: 0 } } });
  app = createGateway(
    settingsFor(manifest, {}, { allowLoopback: true, describeProviders: false }),
    runtimePorts,
  );
});
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

/**
 * What must match: a refusal's status, code and field; for a request that was searched, only the
 * plan. A search's outcome may differ by timing (a `timeout_ms` of 1 can meet a provider in time in
 * one form and not in the other), so ok, partial and failed searches compare alike.
 */
async function answerOf(res: Response) {
  const body = await res.json();
  assert.notEqual(body.code, "internal_error", JSON.stringify(body.error));
  return body.status === "usage_error"
    ? { status: res.status, code: body.code, field: body.error?.field }
    : { searched: body.result?.decision };
}

describe("property: GET and POST answer one request alike", () => {
  it(`gives both forms the same status, code and error.field (${RUNS} runs${SECONDS ? ` or ${SECONDS} s` : ""}, at least ${MIN_RUNS})`, async () => {
    const outcomes = new Map<string, number>();
    const property = fc.asyncProperty(requestArb, async ({ entries, plus }) => {
      const get = getQuery(entries, plus);
      const byGet = await answerOf(await app.request(`/v1/search?${get}`));
      const byPost = await answerOf(
        await app.request("/v1/search", {
          method: "POST",
          body: postBody(entries),
          headers: { "content-type": "application/json" },
        }),
      );
      assert.deepEqual(byPost, byGet, `GET ?${get.slice(0, 300)}`);
      const seen = "code" in byGet ? byGet.code : "searched";
      outcomes.set(seen, (outcomes.get(seen) ?? 0) + 1);
    });
    const started = Date.now();
    const details = await fc.check(property, {
      numRuns: RUNS,
      ...(SEED === undefined ? {} : { seed: SEED }),
      ...(SECONDS === undefined ? {} : { plugins: [fc.interruptAfterTimeLimit(SECONDS * 1000)] }),
    });
    console.log(
      `request-property: ${details.numRuns} runs in ${
        ((Date.now() - started) / 1000).toFixed(1)
      } s (seed ${details.seed}); ${
        [...outcomes].sort((a, b) => b[1] - a[1]).map(([code, n]) => `${code} ${n}`).join(", ")
      }`,
    );
    if (details.failed) assert.fail(await fc.asyncDefaultReportMessage(details));
    assert.ok(
      details.numRuns >= MIN_RUNS,
      `only ${details.numRuns} runs completed; at least ${MIN_RUNS} are needed`,
    );
  });
});
