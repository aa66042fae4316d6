/**
 * Redaction of provider text: every secret form the pattern list recognises is absent from
 * diagnostics (`redact`) and from metadata string values (`sanitiseMetadata`), ordinary words stay
 * readable, the patterns stay fast on hostile input, and no form reaches a caller through any
 * channel a provider controls, over real HTTP on 127.0.0.1.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { redact, redactSecrets } from "../src/io/redact.ts";
import { sanitiseAnswer, sanitiseMetadata } from "../src/core/sanitize.ts";
import { gateway, search } from "./support/gateway.ts";
import { answer, type Handler, raw, startServer } from "./support/servers.ts";

const ERROR_VERSION = "tracefetch.provider-error.v1";

/** Secret values: shorter than any length rule, a plain word, and a long token. */
const SHORT = "zq3";
const WORD = "abc";
const LONG = "Zq7LongSecret9f8e7d6c5b4a3";
const VALUES = [SHORT, WORD, LONG];

/** Characters that render as nothing, each able to split a keyword from its secret. */
const INVISIBLES = [
  "\u200B", // zero-width space
  "\u200C", // zero-width non-joiner
  "\u200D", // zero-width joiner
  "\u2060", // word joiner
  "\uFEFF", // zero-width no-break space (byte order mark)
  "\u00AD", // soft hyphen
  "\u180E", // Mongolian vowel separator
  "\u2062", // invisible times
  "\u202E", // right-to-left override
  "\u{E0020}", // tag space
  "\u034F", // combining grapheme joiner
  "\uFE0F", // variation selector 16
];

/** What a reader sees: the text without the characters above (and any other format character). */
const visible = (text: string) =>
  text.replace(/[\p{Cf}\u034F\u115F\u1160\u17B4\u17B5\u3164\uFFA0\uFE00-\uFE0F]/gu, "");

const PEM_LABELS = [
  "PRIVATE KEY",
  "RSA PRIVATE KEY",
  "EC PRIVATE KEY",
  "DSA PRIVATE KEY",
  "OPENSSH PRIVATE KEY",
  "ENCRYPTED PRIVATE KEY",
  "PGP PRIVATE KEY BLOCK",
];
const PEM_LINE = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7";

type Form = readonly [name: string, make: (secret: string) => string];

/** Every form in which a secret is redacted, as a function of the secret value. */
const FORMS: Form[] = [
  // Bearer, whatever the length of its value and whatever separates them.
  ["Bearer s", (s) => `Bearer ${s}`],
  ["bearer s, lower case", (s) => `upstream said bearer ${s} and gave up`],
  ["BEARER s, upper case", (s) => `BEARER ${s}`],
  ["Bearer: s", (s) => `Bearer: ${s}`],
  ["Bearer:s", (s) => `Bearer:${s}`],
  ["Bearer=s", (s) => `Bearer=${s}`],
  ["Bearer then a whitespace run", (s) => `Bearer \t  ${s}`],
  ["Bearer then a newline", (s) => `Bearer\n${s}`],
  ['Bearer "s"', (s) => `Bearer "${s}"`],
  ["Bearer s at a sentence end", (s) => `refused Bearer ${s}.`],
  ["Authorization: Bearer s", (s) => `Authorization: Bearer ${s}`],
  ["Authorization: Bearer: s", (s) => `Authorization: Bearer: ${s}`],
  ["authorization:bearer:s", (s) => `authorization:bearer:${s}`],
  ["a JSON header object", (s) => `{"authorization":"Bearer ${s}"}`],
  ["an escaped JSON header object", (s) => `{\\"Authorization\\":\\"Bearer ${s}\\"}`],
  // URL-encoded and form-encoded.
  ["bearer%20s", (s) => `bearer%20${s}`],
  ["Bearer+s", (s) => `Bearer+${s}`],
  ["bearer%2520s, encoded twice", (s) => `bearer%2520${s}`],
  ["Bearer%3A%20s", (s) => `Bearer%3A%20${s}`],
  ["authorization%3A%20Bearer%20s", (s) => `authorization%3A%20Bearer%20${s}`],
  ["Authorization%3A+Bearer+s", (s) => `GET /x?h=Authorization%3A+Bearer+${s}&y=1`],
  ["auth=Bearer%20s in a query", (s) => `/cb?auth=Bearer%20${s}&next=2`],
  // Other schemes after a secret-named key, whatever the value's length.
  ["Authorization: Basic s", (s) => `Authorization: Basic ${s}`],
  ["Authorization: Token s", (s) => `Authorization: Token ${s}`],
  ["Authorization: s", (s) => `Authorization: ${s}`],
  // Basic and token with a credential-looking value.
  ["Basic base64(user:s)", (s) => `Basic ${btoa(`user:${s}`)}`],
  ["token s with digits", (s) => `token ${s}A9b8C7d6 rejected`],
  ["Token%20s with digits", (s) => `Token%20${s}A9b8C7d6`],
  // Secret-named keys.
  ["token=s", (s) => `token=${s}`],
  ["api_key: s", (s) => `api_key: ${s}`],
  ["X-Api-Key: s", (s) => `X-Api-Key: ${s}`],
  ['"client_secret": "s"', (s) => `{"client_secret": "${s}"}`],
  ["'password': 's'", (s) => `{'password': '${s}'}`],
  ["password=s&next", (s) => `password=${s}&next=1`],
  ["Cookie: session=s", (s) => `Cookie: session=${s}`],
  ["access_token%3Ds", (s) => `access_token%3D${s}`],
  ["an escaped JSON key", (s) => `{\\"api_key\\":\\"${s}\\"}`],
  ["PRIVATE_KEY=s", (s) => `PRIVATE_KEY=${s}`],
  // Tokens recognised by their shape.
  ["a JWT", (s) => `jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ${s}In0.c2ln${s}`],
  [
    "a JWT glued to a prefix",
    (s) => `text/x-eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ${s}In0.c2ln${s}`,
  ],
  ["a JWT glued to a digit", (s) => `v2eyJhbGciOiJIUzI1NiJ9.eyJzdWIi${s}.c2ln${s}`],
  ["a GitHub token", (s) => `ghp_${s}${"K".repeat(24)}`],
  ["a GitHub fine-grained token", (s) => `github_pat_${s}_${"B2".repeat(12)}`],
  ["an OpenAI-style key", (s) => `key sk-${s}${"A1".repeat(10)}`],
  // PEM private keys, with their END line and without it.
  ...PEM_LABELS.flatMap((label): Form[] => [
    [
      `a ${label} block`,
      (s) => `-----BEGIN ${label}-----\n${PEM_LINE}\n${s}\n-----END ${label}-----`,
    ],
    [
      `a ${label} block cut before its END line`,
      (s) => `-----BEGIN ${label}-----\n${PEM_LINE}\n${s}`,
    ],
  ]),
  // Invisible characters between the keyword and the secret, in the keyword, in the secret.
  ...INVISIBLES.flatMap((c): Form[] => {
    const code = `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;
    return [
      [`Bearer ${code} s`, (s) => `Bearer${c}${s}`],
      [`Bearer ${code} then a space`, (s) => `Bearer${c} ${s}`],
      [`Bea ${code} rer s`, (s) => `Bea${c}rer ${s}`],
      [`Bearer s split by ${code}`, (s) => `Bearer ${s.slice(0, 1)}${c}${s.slice(1)}`],
      [`token ${code} = s`, (s) => `to${c}ken${c}=${c}${s}`],
      [`Authorization: ${code} Bearer ${code} s`, (s) => `Authorization:${c}Bearer${c}${s}`],
      [`a JWT after ${code}`, (s) => `${c}eyJhbGciOiJIUzI1NiJ9.eyJ${c}zdWIi${s}.c2ln${s}`],
    ];
  }),
];

/** Forms whose secret is fixed by its shape rather than chosen. */
const FIXED: Array<[name: string, text: string, secret: string]> = [
  ["an AWS access key id", "id AKIAZQ3EXAMPLE7KEY9X denied", "ZQ3EXAMPLE7KEY9X"],
  ["Basic with a base64 credential without digits", "Basic dXNlcjpwYXNz", "dXNlcjpwYXNz"],
];

/** Text that must come back exactly as it was: ordinary words after basic, token or a key name. */
const READABLE = [
  "token expired",
  "the token is invalid",
  "basic auth failed",
  "Token limit reached",
  "Basic authentication is not enabled",
  "token authentication failed for this index",
  "the provider said 'Bearer' is required",
  "risk-assessment-procedure-version-two",
  "begin private key rotation before Friday",
  "session expired, sign in again",
  "rate limited: 30 requests per minute",
  "index 'papers' has 12,345 documents",
];

describe("redaction: every secret form is redacted in diagnostics and metadata values", () => {
  for (const [name, make] of FORMS) {
    it(`${name}: the secret is in neither redact() nor any metadata value`, () => {
      for (const secret of VALUES) {
        const text = make(secret);
        const shown = redact(text);
        assert.equal(visible(shown).includes(secret), false, `${JSON.stringify(text)} → ${shown}`);
        assert.ok(shown.includes("[redacted]"), shown);
        const metadata = sanitiseMetadata({
          top: text,
          nested: { inner: text, kept: "ok" },
          list: ["ok", text],
        });
        const json = JSON.stringify(metadata);
        assert.equal(visible(json).includes(secret), false, `${JSON.stringify(text)} → ${json}`);
        const nested = metadata.nested as Record<string, unknown>;
        const list = metadata.list as unknown[];
        for (const value of [metadata.top, nested.inner, list[1]]) {
          assert.ok(String(value).includes("[redacted]"), String(value));
        }
        assert.equal(nested.kept, "ok");
        assert.equal(list[0], "ok");
      }
    });
  }
  for (const [name, text, secret] of FIXED) {
    it(`${name}: the secret is in neither redact() nor any metadata value`, () => {
      assert.equal(redact(text).includes(secret), false, redact(text));
      const json = JSON.stringify(sanitiseMetadata({ nested: { inner: text }, list: [text] }));
      assert.equal(json.includes(secret), false, json);
    });
  }

  it("keeps the keyword or key and replaces only the value", () => {
    assert.equal(redact("Bearer zq3"), "Bearer [redacted]");
    assert.equal(redact("Authorization: Bearer: zq3"), "Authorization: Bearer: [redacted]");
    assert.equal(
      redact("authorization%3A%20Bearer%20zq3"),
      "authorization%3A%20Bearer%20[redacted]",
    );
    assert.equal(redact("retry with token=zq3 later"), "retry with token=[redacted] later");
    assert.equal(
      redact(`x -----BEGIN RSA PRIVATE KEY-----\n${PEM_LINE}\n-----END RSA PRIVATE KEY----- y`),
      "x [redacted] y",
    );
    // The word after bearer is redacted even when it is an ordinary word.
    assert.equal(redact("bearer token expired"), "bearer [redacted] expired");
  });

  it("redacts a PEM block cut before its END line to the end of the text", () => {
    assert.equal(
      redact(`key: -----BEGIN EC PRIVATE KEY-----\n${PEM_LINE}\nmore`),
      "key: [redacted]",
    );
  });
});

describe("redaction: ordinary text stays readable", () => {
  for (const text of READABLE) {
    it(`"${text}" is unchanged in diagnostics and metadata`, () => {
      assert.equal(redact(text), text);
      assert.equal(redactSecrets(text), text);
      assert.equal(sanitiseMetadata({ note: text }).note, text);
    });
  }

  it("metadata values keep invisible characters that hide nothing: emoji and script joiners", () => {
    const values = ["👩‍💻 maintainer", "می‌خواهم", "🏳️‍🌈", "\u00ADsoft\u00ADhyphen"];
    for (const value of values) {
      assert.equal(sanitiseMetadata({ note: value }).note, value);
      assert.equal(redactSecrets(value), value);
    }
  });

  it("diagnostics drop invisible characters, bidi controls included", () => {
    assert.equal(redact("the \u202Eevil\u202C name\u200B here"), "the evil name here");
  });
});

describe("redaction: linear in the text", () => {
  const hostile: Array<[string, string]> = [
    ["bearer repeated", "bearer ".repeat(15_000)],
    ["Bearer and a zero-width space repeated", "Bearer\u200B".repeat(14_000)],
    ["bearer then zero-width spaces", "bearer" + "\u200B".repeat(100_000)],
    ["bearer then %20 repeated", "bearer" + "%20".repeat(33_000)],
    ["hyphenated letters", "a-".repeat(50_000)],
    ["token repeated without separators", "token".repeat(20_000)],
    ["token then zero-width spaces", "token" + "\u200B".repeat(100_000)],
    ["token then spaces, no value", "token" + " ".repeat(100_000) + "!"],
    ["api_key with long names", ("api_key" + "a".repeat(40) + " ").repeat(2_000)],
    ["eyJ repeated", "eyJ".repeat(33_000)],
    ["dotted runs that never make a token", "x-eyJabcd.abcd".repeat(7_000)],
    [
      "one long run with eyJ and two dots",
      "a".repeat(50_000) + "eyJabcde.abcde." + "b".repeat(50_000),
    ],
    ["eyJ and a zero-width space repeated", "eyJ\u200B".repeat(25_000)],
    ["BEGIN lines without END", "-----BEGIN PRIVATE KEY-----".repeat(4_000)],
    ["dashes", "-".repeat(100_000)],
    ["ghp_ repeated", "ghp_".repeat(25_000)],
    ["sk- repeated", "sk-".repeat(33_000)],
    ["basic repeated", "basic ".repeat(16_000)],
  ];
  for (const [name, text] of hostile) {
    // Linear patterns take a few milliseconds here; a quadratic one takes seconds. The bound leaves
    // room for a loaded machine without letting a quadratic pattern through.
    it(`100 KB of ${name} is redacted in well under a second`, () => {
      const started = performance.now();
      redact(text);
      sanitiseMetadata({ note: text });
      const elapsed = performance.now() - started;
      assert.ok(elapsed < 1_000, `${elapsed.toFixed(1)} ms`);
    });
  }
});

describe("redaction: content is bounded, not redacted", () => {
  it("a candidate's title, snippet and locator keep secret-looking text; its metadata does not", () => {
    const { candidates } = sanitiseAnswer(
      [{
        title: "How to send Bearer zq3",
        locator: "https://docs.example.test/auth?token=zq3",
        snippet: "set token=zq3 and api_key: zq3",
        metadata: { note: "token=zq3" },
      }],
      [],
      10,
    );
    const [c] = candidates;
    assert.equal(c!.title, "How to send Bearer zq3");
    assert.equal(c!.locator, "https://docs.example.test/auth?token=zq3");
    assert.equal(c!.snippet, "set token=zq3 and api_key: zq3");
    assert.equal(c!.metadata.note, "token=[redacted]");
  });
});

/** The forms sent end to end: each family once, with the short and the long secret. */
const WIRE_FORMS = [
  "Bearer ",
  "Bearer: ",
  "Bearer:",
  "Authorization: Bearer: ",
  "Bearer\u200B",
  "Bea\u2060rer ",
  "Bearer\uFEFF",
  "bearer%20",
  "Bearer+",
  "authorization%3A%20Bearer%20",
  "token=",
  "api_key: ",
  "Authorization: Basic ",
].flatMap((prefix) => [SHORT, LONG].map((s) => [`${prefix}${s}`, s] as const)).concat([
  [`-----BEGIN OPENSSH PRIVATE KEY-----\n${PEM_LINE}\n${SHORT}`, SHORT],
  [`-----BEGIN RSA PRIVATE KEY-----\n${LONG}\n-----END RSA PRIVATE KEY-----`, LONG],
  [`-----BEGIN ENCRYPTED PRIVATE KEY----- ${LONG} -----END ENCRYPTED PRIVATE KEY-----`, LONG],
  [`ghp_${LONG}`, LONG],
  [`eyJhbGciOiJIUzI1NiJ9.eyJ${LONG}.sig`, LONG],
]);

/** A header value carries only visible Latin-1 on one line. */
const headerSafe = (text: string) => /^[\x20-\x7e]*$/.test(text.replace(/\n/g, " "));

/**
 * Searches a gateway whose one provider answers through `channel` with each form in turn (the
 * query names the form), and returns every envelope's text with the secret it must not contain.
 */
async function throughGateway(
  channel: (text: string) => Handler,
  forms: ReadonlyArray<readonly [string, string]> = WIRE_FORMS,
) {
  const server = await startServer((req, res, body) => {
    const [text] = forms[Number(JSON.parse(body).query)]!;
    return channel(text)(req, res, body);
  });
  try {
    // Every form must reach the provider: it fails on purpose, more often than suspension allows.
    const app = gateway([{ name: "leaky", endpoint: server.url }], {
      settings: { suspendProviders: false },
    });
    const runs = [];
    for (let i = 0; i < forms.length; i++) {
      const run = await search(app, { q: String(i) });
      runs.push({ ...run, form: forms[i]![0], secret: forms[i]![1] });
    }
    return runs;
  } finally {
    await server.close();
  }
}

function assertNoSecret(runs: Awaited<ReturnType<typeof throughGateway>>) {
  for (const { text, form, secret } of runs) {
    assert.equal(
      visible(text).includes(secret),
      false,
      `${JSON.stringify(form)} leaked: ${text.slice(0, 1500)}`,
    );
  }
}

describe("redaction end to end: no secret form reaches a caller", () => {
  it("through a provider-error body's message", async () => {
    const runs = await throughGateway((text) =>
      raw(
        500,
        JSON.stringify({ schema_version: ERROR_VERSION, code: "search_failed", message: text }),
      )
    );
    for (const { body } of runs) {
      assert.equal(body.result.candidates[0].code, "search_failed");
      assert.match(body.result.candidates[0].message, /\[redacted\]/);
    }
    assertNoSecret(runs);
  });

  it("through the provider's warnings", async () => {
    const runs = await throughGateway((text) =>
      answer("leaky", "leaky", [{ title: "T", locator: "https://example.test/1" }], {
        warnings: ["first", text],
      })
    );
    for (const { body } of runs) {
      const [attempt] = body.result.candidates;
      assert.equal(attempt.outcome, "success");
      assert.ok(attempt.warnings.includes("first"));
      assert.ok(attempt.warnings.some((w: string) => w.includes("[redacted]")), attempt.warnings);
    }
    assertNoSecret(runs);
  });

  it("through a wrong content type quoted in the message", async () => {
    const forms = WIRE_FORMS.filter(([text]) => headerSafe(text))
      .map(([text, secret]) => [text.replace(/\n/g, " "), secret] as const);
    assert.ok(forms.length > 10);
    const runs = await throughGateway(
      (text) => raw(200, "{}", { "content-type": `text/plain; ${text}` }),
      forms,
    );
    for (const { body } of runs) {
      assert.equal(body.result.candidates[0].code, "wrong_content_type");
      assert.match(body.result.candidates[0].message, /text\/plain/);
    }
    assertNoSecret(runs);
  });

  it("through an unknown field's name in the schema violation message", async () => {
    const runs = await throughGateway((text) => answer("leaky", "leaky", [], { [text]: 1 }));
    const nested = await throughGateway((text) =>
      answer("leaky", "leaky", [{ title: "T", locator: "https://example.test/1", [text]: 1 }])
    );
    for (const { body } of [...runs, ...nested]) {
      assert.equal(body.result.candidates[0].code, "schema_violation");
      assert.match(body.result.candidates[0].message, /\[redacted\]/);
    }
    assertNoSecret(runs);
    assertNoSecret(nested);
  });

  it("through the provider and scope it claims, quoted in the identity mismatch", async () => {
    const provider = await throughGateway((text) => answer(text, "leaky", []));
    const scope = await throughGateway((text) => answer("leaky", text, []));
    for (const { body } of [...provider, ...scope]) {
      assert.equal(body.result.candidates[0].code, "identity_mismatch");
      assert.match(body.result.candidates[0].message, /\[redacted\]/);
    }
    assertNoSecret(provider);
    assertNoSecret(scope);
  });

  it("through metadata values at every depth, while the title and snippet are kept", async () => {
    const runs = await throughGateway((text) =>
      answer("leaky", "leaky", [{
        title: "Bearer title-zq9",
        locator: "https://example.test/doc?token=loc-zq9",
        snippet: "send token=snippet-zq9",
        metadata: { note: text, nested: { inner: text }, list: ["ok", text] },
      }])
    );
    for (const { body } of runs) {
      const [attempt] = body.result.candidates;
      assert.equal(attempt.outcome, "success");
      const [candidate] = attempt.candidates;
      assert.equal(candidate.title, "Bearer title-zq9");
      assert.equal(candidate.locator, "https://example.test/doc?token=loc-zq9");
      assert.equal(candidate.snippet, "send token=snippet-zq9");
      const { note, nested, list } = candidate.metadata;
      for (const value of [note, nested.inner, list[1]]) assert.match(value, /\[redacted\]/);
      assert.equal(list[0], "ok");
      assert.equal(body.result.merged[0].title, "Bearer title-zq9");
    }
    assertNoSecret(runs);
  });
});
