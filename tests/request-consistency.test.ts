import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { answer, startServer, type TestServer } from "./support/servers.ts";
import { assertEnvelope, gateway } from "./support/gateway.ts";

/**
 * One search request written as GET parameters and as a POST body gets one answer: the same HTTP
 * status, code and error.field (docs/envelope.md). Each case gives the raw query string, the raw
 * body, and the answer both must get.
 */

type Body = string | Uint8Array<ArrayBuffer>;
type Expect = [code: string, field?: string];
type Case = [what: string, get: string, post: Body, expect: Expect];

const utf8 = (text: string) => new TextEncoder().encode(text);
/** A body with raw bytes (for example bytes that are not UTF-8) between pieces of text. */
const bytes = (...parts: Array<string | number[]>) =>
  new Uint8Array(parts.flatMap((p) => typeof p === "string" ? [...utf8(p)] : p));

const OK: Expect = ["ok"];

/** `limit` and `timeout_ms` written every way: [GET text, JSON value text, answer]. */
const NUMBERS: Array<[string, string, Expect]> = [
  ["8", "8", OK],
  ["1e2", "1e2", OK],
  ["1E2", "1E2", OK],
  ["1e%2B1", "1e+1", OK],
  ["100.0", "100.0", OK],
  ["1.5", "1.5", ["limit_out_of_range", "limit"]],
  ["1e-2", "1e-2", ["limit_out_of_range", "limit"]],
  ["1e308", "1e308", ["limit_out_of_range", "limit"]],
  ["1e309", "1e309", ["limit_out_of_range", "limit"]],
  ["-0", "-0", ["limit_out_of_range", "limit"]],
  ["0", "0", ["limit_out_of_range", "limit"]],
  ["101", "101", ["limit_out_of_range", "limit"]],
  ["9".repeat(400), "9".repeat(400), ["limit_out_of_range", "limit"]],
  // Not JSON numbers: the GET text is a string, as the same text is a string in a body.
  ["NaN", '"NaN"', ["invalid_field", "limit"]],
  ["Infinity", '"Infinity"', ["invalid_field", "limit"]],
  ["%205", '" 5"', ["invalid_field", "limit"]],
  ["+5", '" 5"', ["invalid_field", "limit"]],
  ["5%20", '"5 "', ["invalid_field", "limit"]],
  ["%2B5", '"+5"', ["invalid_field", "limit"]],
  ["0x10", '"0x10"', ["invalid_field", "limit"]],
  ["05", '"05"', ["invalid_field", "limit"]],
  [".5", '".5"', ["invalid_field", "limit"]],
  ["", '""', ["invalid_field", "limit"]],
  ["0".repeat(400), `"${"0".repeat(400)}"`, ["invalid_field", "limit"]],
];

const TIMEOUTS: Array<[string, string, Expect]> = [
  ["3e5", "3e5", OK],
  ["2.5", "2.5", ["timeout_out_of_range", "timeout_ms"]],
  ["300001", "300001", ["timeout_out_of_range", "timeout_ms"]],
  ["-0", "-0", ["timeout_out_of_range", "timeout_ms"]],
  ["1e400", "1e400", ["timeout_out_of_range", "timeout_ms"]],
  ["Infinity", '"Infinity"', ["invalid_field", "timeout_ms"]],
  ["1_000", '"1_000"', ["invalid_field", "timeout_ms"]],
];

/** Characters no reader sees; a query made only of them is blank. */
const INVISIBLE: Array<[string, string]> = [
  ["U+200B zero-width space", "\u200B"],
  ["U+200C zero-width non-joiner", "\u200C"],
  ["U+200D zero-width joiner", "\u200D"],
  ["U+2060 word joiner", "\u2060"],
  ["U+FEFF", "\uFEFF"],
  ["U+3000 ideographic space", "\u3000"],
  ["U+00A0 no-break space", "\u00A0"],
  ["U+3164 Hangul filler", "\u3164"],
  ["U+FE0F variation selector", "\uFE0F"],
  ["U+00AD soft hyphen", "\u00AD"],
  ["a tab, a newline and U+0000", "\t\n\u0000"],
  ["a mix", " \u200B\u3000\u2060\uFEFF\u00A0 "],
];

/** Filters written every way: [what, GET parameters, the body's filters object, answer]. */
const FILTERS: Array<[string, string, string, Expect]> = [
  ["domains, one name", "domains=x.org", '{"domains":{"include":["x.org"]}}', OK],
  [
    "domains and exclude_domains, several names",
    "domains=x.org,www.y.org&exclude_domains=a.x.org",
    '{"domains":{"include":["x.org","www.y.org"],"exclude":["a.x.org"]}}',
    OK,
  ],
  [
    "both dates",
    "published_after=2025-01-01&published_before=2025-12-31",
    '{"published_after":"2025-01-01","published_before":"2025-12-31"}',
    OK,
  ],
  [
    "the same day twice",
    "published_after=2024-02-29&published_before=2024-02-29",
    '{"published_after":"2024-02-29","published_before":"2024-02-29"}',
    OK,
  ],
  ["domains empty", "domains=", '{"domains":{"include":[]}}', [
    "invalid_field",
    "filters.domains.include",
  ]],
  ["exclude_domains empty", "exclude_domains=", '{"domains":{"exclude":[]}}', [
    "invalid_field",
    "filters.domains.exclude",
  ]],
  [
    "domains with an empty name",
    "domains=x.org,,y.org",
    '{"domains":{"include":["x.org","","y.org"]}}',
    ["invalid_field", "filters.domains.include"],
  ],
  ["domains with a space", "domains=x.org,%20y.org", '{"domains":{"include":["x.org"," y.org"]}}', [
    "invalid_field",
    "filters.domains.include",
  ]],
  ["a host in capitals", "exclude_domains=X.org", '{"domains":{"exclude":["X.org"]}}', [
    "invalid_field",
    "filters.domains.exclude",
  ]],
  ["a host with a port", "exclude_domains=x.org:8080", '{"domains":{"exclude":["x.org:8080"]}}', [
    "invalid_field",
    "filters.domains.exclude",
  ]],
  ["a URL for a host", "domains=https%3A%2F%2Fx.org", '{"domains":{"include":["https://x.org"]}}', [
    "invalid_field",
    "filters.domains.include",
  ]],
  ["a label ending in a hyphen", "domains=x-.org", '{"domains":{"include":["x-.org"]}}', [
    "invalid_field",
    "filters.domains.include",
  ]],
  [
    "a host of 254 characters",
    `domains=${"a.".repeat(126)}ab`,
    `{"domains":{"include":["${"a.".repeat(126)}ab"]}}`,
    ["invalid_field", "filters.domains.include"],
  ],
  [
    "33 hosts",
    `domains=${Array(33).fill("x.org").join(",")}`,
    `{"domains":{"include":[${Array(33).fill('"x.org"').join(",")}]}}`,
    ["invalid_field", "filters.domains.include"],
  ],
  [
    "32 hosts",
    `domains=${Array(32).fill("x.org").join(",")}`,
    `{"domains":{"include":[${Array(32).fill('"x.org"').join(",")}]}}`,
    OK,
  ],
  ["published_after empty", "published_after=", '{"published_after":""}', [
    "invalid_field",
    "filters.published_after",
  ]],
  ["a date without zeros", "published_after=2025-1-1", '{"published_after":"2025-1-1"}', [
    "invalid_field",
    "filters.published_after",
  ]],
  [
    "a date-time for a date",
    "published_before=2025-01-01T00%3A00%3A00Z",
    '{"published_before":"2025-01-01T00:00:00Z"}',
    ["invalid_field", "filters.published_before"],
  ],
  [
    "February 29 of a common year",
    "published_before=2025-02-29",
    '{"published_before":"2025-02-29"}',
    ["invalid_field", "filters.published_before"],
  ],
  [
    "after later than before",
    "published_before=2025-01-01&published_after=2025-01-02",
    '{"published_before":"2025-01-01","published_after":"2025-01-02"}',
    ["invalid_field", "filters.published_after"],
  ],
];

const CASES: Case[] = [
  ...NUMBERS.map(([get, json, expect]): Case => [
    `limit ${get === "" ? "(empty)" : get.slice(0, 12)}`,
    `q=x&limit=${get}`,
    `{"query":"x","limit":${json}}`,
    expect,
  ]),
  ...TIMEOUTS.map(([get, json, expect]): Case => [
    `timeout_ms ${get}`,
    `q=x&timeout_ms=${get}`,
    `{"query":"x","timeout_ms":${json}}`,
    expect,
  ]),
  ...INVISIBLE.map(([what, text]): Case => [
    `a query of only ${what}`,
    `q=${encodeURIComponent(text)}`,
    JSON.stringify({ query: text }),
    ["query_empty", "query"],
  ]),
  [
    "one visible character among invisible ones",
    "q=%E2%80%8Bx%E2%80%8B",
    JSON.stringify({
      query: "\u200Bx\u200B",
    }),
    OK,
  ],
  ["an empty query", "q=", '{"query":""}', ["query_empty", "query"]],
  ["no query", "limit=3", '{"limit":3}', ["query_empty", "query"]],
  [
    "a query of 2001 characters",
    `q=${"q".repeat(2001)}`,
    JSON.stringify({
      query: "q".repeat(2001),
    }),
    ["query_too_long", "query"],
  ],
  [
    "a query of 2001 invisible characters",
    `q=${"%E2%80%8B".repeat(2001)}`,
    JSON.stringify({
      query: "\u200B".repeat(2001),
    }),
    ["query_empty", "query"],
  ],
  ["+ as a space", "q=a+b", '{"query":"a b"}', OK],
  ["%2B as a plus", "q=a%2Bb", '{"query":"a+b"}', OK],
  // Bytes that are not UTF-8, percent-encoded in GET and raw in the body.
  ["bytes FF FE in the query", "q=%FF%FE", bytes('{"query":"', [0xff, 0xfe], '"}'), [
    "invalid_utf8",
  ]],
  ["an overlong encoding of /", "q=%C0%AF", bytes('{"query":"', [0xc0, 0xaf], '"}'), [
    "invalid_utf8",
  ]],
  ["a truncated sequence", "q=a%E2%82", bytes('{"query":"a', [0xe2, 0x82], '"}'), [
    "invalid_utf8",
  ]],
  ["a surrogate, encoded as UTF-8 bytes or escaped", "q=%ED%A0%80", '{"query":"\\ud800"}', [
    "invalid_utf8",
  ]],
  ["a low surrogate alone", "q=a%ED%B0%80", '{"query":"a\\udc00"}', ["invalid_utf8"]],
  ["an escaped surrogate pair", "q=%F0%9F%98%80", '{"query":"\\ud83d\\ude00"}', OK],
  ["bad bytes in an unknown field's name", "%FF=1&q=x", bytes('{"', [0xff], '":1,"query":"x"}'), [
    "invalid_utf8",
  ]],
  [
    "bad bytes before an unknown field",
    "colour=1&q=%FF",
    bytes('{"colour":1,"query":"', [
      0xff,
    ], '"}'),
    ["invalid_utf8"],
  ],
  // Fields and parameters that are unknown or given twice.
  ["an unknown field", "q=x&colour=red", '{"query":"x","colour":"red"}', [
    "unknown_field",
    "colour",
  ]],
  ["the first unknown field, as written", "zz=1&q=x&1=2", '{"zz":1,"query":"x","1":2}', [
    "unknown_field",
    "zz",
  ]],
  [
    "an unknown field named like an Object method",
    "q=x&constructor=1",
    '{"query":"x","constructor":1}',
    [
      "unknown_field",
      "constructor",
    ],
  ],
  ["an unknown field named __proto__", "q=x&__proto__=1", '{"query":"x","__proto__":1}', [
    "unknown_field",
    "__proto__",
  ]],
  ["a repeated query", "q=a&q=b", '{"query":"a","query":"b"}', ["invalid_field", "query"]],
  ["a repeated limit, both valid", "q=x&limit=3&limit=3", '{"query":"x","limit":3,"limit":3}', [
    "invalid_field",
    "limit",
  ]],
  [
    "a repeated providers",
    "q=x&providers=papers&providers=code",
    '{"query":"x","providers":["papers"],"providers":["code"]}',
    [
      "invalid_field",
      "providers",
    ],
  ],
  [
    "an unknown field after a repeated one",
    "q=x&limit=1&limit=2&colour=red",
    '{"query":"x","limit":1,"limit":2,"colour":"red"}',
    [
      "unknown_field",
      "colour",
    ],
  ],
  ["a repeated unknown field", "q=x&colour=1&colour=2", '{"query":"x","colour":1,"colour":2}', [
    "unknown_field",
    "colour",
  ]],
  [
    "a repeated field with a wrong value",
    "q=x&limit=0&limit=0",
    '{"query":"x","limit":0,"limit":0}',
    [
      "invalid_field",
      "limit",
    ],
  ],
  // providers, scope, tier and view.
  ["providers empty", "q=x&providers=", '{"query":"x","providers":[]}', [
    "no_providers_selected",
    "scope",
  ]],
  [
    "providers with an empty name",
    "q=x&providers=papers,,code",
    '{"query":"x","providers":["papers","","code"]}',
    [
      "unknown_provider",
      "providers",
    ],
  ],
  [
    "providers with a space",
    "q=x&providers=papers,%20code",
    '{"query":"x","providers":["papers"," code"]}',
    [
      "unknown_provider",
      "providers",
    ],
  ],
  ["two providers", "q=x&providers=papers,code", '{"query":"x","providers":["papers","code"]}', OK],
  ["scope empty", "q=x&scope=", '{"query":"x","scope":""}', ["unknown_scope", "scope"]],
  ["tier empty", "q=x&tier=", '{"query":"x","tier":""}', ["unknown_tier", "tier"]],
  ["view empty", "q=x&view=", '{"query":"x","view":""}', ["invalid_field", "view"]],
  ["view merged", "q=x&view=merged", '{"query":"x","view":"merged"}', OK],
  [
    "a name over 64 characters",
    `q=x&scope=${"s".repeat(65)}`,
    `{"query":"x","scope":"${"s".repeat(65)}"}`,
    ["invalid_field", "scope"],
  ],
  // Filters: GET parameters fill the body's `filters` object.
  ...FILTERS.map(([what, get, filters, expect]): Case => [
    what,
    `q=x&${get}`,
    `{"query":"x","filters":${filters}}`,
    expect,
  ]),
  // Which problem is reported when there are several.
  [
    "a bad date and a bad limit",
    "q=x&published_after=x&limit=0",
    '{"query":"x","filters":{"published_after":"x"},"limit":0}',
    ["limit_out_of_range", "limit"],
  ],
  [
    "a bad host and a bad view",
    "q=x&view=no&domains=X",
    '{"query":"x","view":"no","filters":{"domains":{"include":["X"]}}}',
    ["invalid_field", "view"],
  ],
  ["a blank query and a bad limit", "q=%E2%80%8B&limit=0", '{"query":"\\u200b","limit":0}', [
    "query_empty",
    "query",
  ]],
  [
    "a bad limit and a bad timeout",
    "q=x&timeout_ms=0&limit=0",
    '{"query":"x","timeout_ms":0,"limit":0}',
    [
      "limit_out_of_range",
      "limit",
    ],
  ],
  ["a bad limit and a bad view", "q=x&view=no&limit=1.5", '{"query":"x","view":"no","limit":1.5}', [
    "limit_out_of_range",
    "limit",
  ]],
];

let papers: TestServer;
let code: TestServer;
let app: ReturnType<typeof gateway>;

before(async () => {
  const hit = [{ title: "hit", locator: "https://x.org/a" }];
  papers = await startServer(answer("papers", "papers", hit));
  code = await startServer(answer("code", "code", hit));
  app = gateway([{ name: "papers", endpoint: papers.url }, { name: "code", endpoint: code.url }]);
});
after(async () => {
  await Promise.all([papers.close(), code.close()]);
});

type Answer = { status: number; code: string; field: string | undefined };

async function answerOf(res: Response): Promise<Answer> {
  const body = assertEnvelope(await res.json());
  return { status: res.status, code: body.code, field: body.error?.field };
}

const viaGet = async (query: string) => answerOf(await app.request(`/v1/search?${query}`));
const viaPost = async (body: Body) =>
  answerOf(
    await app.request("/v1/search", {
      method: "POST",
      body,
      headers: { "content-type": "application/json" },
    }),
  );

const contacted = () => papers.requests.length + code.requests.length;

describe("GET and POST answer one request alike", () => {
  for (const [what, get, post, [code, field]] of CASES) {
    it(`${what}: ${code}${field ? ` (${field})` : ""} in both forms`, async () => {
      const before = contacted();
      const byGet = await viaGet(get);
      const byPost = await viaPost(post);
      const want = { status: code === "ok" ? 200 : 400, code, field };
      assert.deepEqual({ get: byGet, post: byPost }, { get: want, post: want });
      if (code !== "ok") {
        assert.equal(contacted(), before, "a refused request contacted a provider");
      }
    });
  }
});

describe("GET and POST send providers the same query", () => {
  const queries: Array<[string, string, string]> = [
    ["+ is a space", "q=a+b", "a b"],
    ["%2B is a plus", "q=a%2Bb", "a+b"],
    ["a % without hex digits stays", "q=100%25%20and%20100%", "100% and 100%"],
    ["a BOM inside the value stays", "q=%EF%BB%BFx", "\uFEFFx"],
    ["non-ASCII text", "q=caf%C3%A9%20%F0%9F%98%80", "caf\u00e9 \u{1F600}"],
  ];
  for (const [what, get, query] of queries) {
    it(what, async () => {
      const sent = async (res: Response | Promise<Response>) => {
        const from = papers.requests.length;
        assert.equal((await answerOf(await res)).code, "ok");
        return papers.requests.slice(from).map((r) => JSON.parse(r.body).query);
      };
      const byGet = await sent(app.request(`/v1/search?${get}&providers=papers`));
      const byPost = await sent(
        app.request("/v1/search", {
          method: "POST",
          body: JSON.stringify({ query, providers: ["papers"] }),
          headers: { "content-type": "application/json" },
        }),
      );
      assert.deepEqual({ byGet, byPost }, { byGet: [query], byPost: [query] });
    });
  }
});

describe("parameters and fields only one form has", () => {
  it("refuses a repeated stream parameter like any repeated parameter", async () => {
    for (const query of ["q=x&stream=ndjson&stream=sse", "q=x&stream=sse&stream=sse"]) {
      assert.deepEqual(await viaGet(query), {
        status: 400,
        code: "invalid_field",
        field: "stream",
      });
    }
  });

  it("refuses a stream parameter other than ndjson or sse", async () => {
    for (const query of ["q=x&stream=", "q=x&stream=json", "q=x&stream=%FF"]) {
      const answer = await viaGet(query);
      assert.equal(answer.status, 400, query);
      assert.ok(["invalid_field", "invalid_utf8"].includes(answer.code), query);
    }
  });

  it("refuses GET version and query as unknown, naming the parameters GET takes", async () => {
    for (const [query, name] of [["q=x&version=1", "version"], ["query=x", "query"]]) {
      const res = await app.request(`/v1/search?${query}`);
      const body = assertEnvelope(await res.json());
      assert.deepEqual([res.status, body.code, body.error.field], [400, "unknown_field", name]);
      assert.match(body.error.message, /takes q, scope, providers, limit, tier, view/);
    }
    assert.deepEqual(await viaPost('{"query":"x","version":1,"providers":["papers"]}'), {
      status: 200,
      code: "ok",
      field: undefined,
    });
  });

  it("refuses an explicit null in a body with null_field", async () => {
    assert.deepEqual(await viaPost('{"query":"x","limit":null}'), {
      status: 400,
      code: "null_field",
      field: "limit",
    });
  });

  it("refuses a key repeated inside a nested object with invalid_json", async () => {
    for (
      const body of [
        '{"query":"x","colour":{"k":1,"k":2}}',
        '{"query":"x","providers":[{"a":1,"a":2}]}',
      ]
    ) {
      assert.deepEqual(await viaPost(body), {
        status: 400,
        code: "invalid_json",
        field: undefined,
      });
    }
  });

  it("keeps the keys of sibling and nested objects apart", async () => {
    const bodies: Array<[string, string]> = [
      ['{"query":"x","colour":[{"a":1},{"a":1}]}', "unknown_field"],
      ['{"query":"x","colour":{"a":{"a":1},"b":{"a":1}}}', "unknown_field"],
      ['{"query":"x","colour":{"a":{"b":{}},"b":2}}', "unknown_field"],
      ['{"query":"x","colour":{"a":{"b":{}},"a":2}}', "invalid_json"],
      ['{"query":"x","colour":{"\\u0061":1,"a":2}}', "invalid_json"],
      ['{"query":"x","colour":{"a\\"":1,"a\\\\":2}}', "unknown_field"],
    ];
    for (const [body, code] of bodies) assert.equal((await viaPost(body)).code, code, body);
  });

  it("names the repeated key in the message", async () => {
    const res = await app.request("/v1/search", {
      method: "POST",
      body: '{"query":"a","query":"b"}',
      headers: { "content-type": "application/json" },
    });
    const body = assertEnvelope(await res.json());
    assert.match(body.error.message, /the key "query" appears more than once/);
  });
});
