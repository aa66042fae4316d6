import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { answer, startServer, type TestServer } from "./support/servers.ts";
import { assertEnvelope, gateway, manifestOf, validators } from "./support/gateway.ts";
import { executePlan, planSearch, type SearchDeps } from "../src/core/mod.ts";
import {
  filterHost,
  filtersFor,
  hostMatches,
  publishedDay,
  skipForFilters,
} from "../src/core/filters.ts";
import { validateManifest } from "../src/protocol/validate-manifest.ts";
import { parseSearchRequest } from "../src/protocol/search-request.ts";
import type { FilterName } from "../src/protocol/search-filters.ts";
import { httpProvider } from "../src/transport/http-provider.ts";
import { exchangeOverFetch } from "../src/io/provider-exchange.ts";
import { Semaphore } from "../src/io/gate.ts";

/**
 * Search filters (docs/envelope.md, "Filters"): the gateway drops every candidate that fails a
 * filter or that it cannot judge, counts it in the attempt, and sends a provider only the filters
 * it declared.
 */

const hit = (locator: string, published_at?: string | null) => ({
  title: `t ${locator}`,
  locator,
  ...(published_at === undefined ? {} : { published_at }),
});

/** Locators on and off evil.org, in every spelling of its host. */
const EVIL = [
  "https://evil.org/a",
  "https://WWW.Evil.org/b",
  "https://docs.evil.org:443/c",
  "https://evil.org./d",
  "http://sub.www.evil.org/e",
  "HTTPS://EVIL.ORG:8443/f",
];
const KEPT = [
  "https://notevil.org/g",
  "https://good.org/h",
  "https://evil.org.good.org/i",
  "https://www.good.org/j",
];
const HOSTLESS = ["urn:isbn:0451450523", "file:///etc/hosts", "mailto:a@evil.org"];

const DATED = [
  hit("https://d.org/undated"),
  hit("https://d.org/null", null),
  hit("https://d.org/first", "2025-01-01"),
  hit("https://d.org/last", "2025-12-31"),
  hit("https://d.org/day-before", "2024-12-31"),
  hit("https://d.org/day-after", "2026-01-01"),
  hit("https://d.org/written-date", "2025-12-31T23:30:00-05:00"),
  hit("https://d.org/last-second", "2025-12-31T23:59:59Z"),
  hit("https://d.org/next-year-east", "2026-01-01T00:00:00+14:00"),
  hit("https://d.org/first-midnight", "2025-01-01T00:00:00.000Z"),
  hit("https://d.org/no-month-13", "2025-13-01"),
  hit("https://d.org/no-feb-30", "2025-02-30"),
  hit("https://d.org/words", "June 2025"),
  hit("https://d.org/no-offset", "2025-06-01T10:00:00"),
  hit("https://d.org/padded", "  2025-06-01  "),
];
const DATED_KEPT = [
  "https://d.org/first",
  "https://d.org/last",
  "https://d.org/written-date",
  "https://d.org/last-second",
  "https://d.org/first-midnight",
  "https://d.org/padded",
];

let one: TestServer;
let two: TestServer;
let dates: TestServer;
let app: ReturnType<typeof gateway>;

before(async () => {
  one = await startServer(answer("one", "web", [...EVIL, ...KEPT, ...HOSTLESS].map((l) => hit(l))));
  two = await startServer(answer("two", "web", [...KEPT, ...EVIL].reverse().map((l) => hit(l))));
  dates = await startServer(answer("dates", "dated", DATED));
  app = gateway([
    { name: "one", scope: "web", endpoint: one.url },
    { name: "two", scope: "web", endpoint: two.url },
    { name: "dates", scope: "dated", endpoint: dates.url },
  ]);
});
after(async () => {
  await Promise.all([one.close(), two.close(), dates.close()]);
});

const postSearch = async (body: unknown) => {
  const res = await app.request("/v1/search", {
    method: "POST",
    body: JSON.stringify(body),
    headers: { "content-type": "application/json" },
  });
  return { status: res.status, body: assertEnvelope(await res.json()) };
};
const getSearch = async (query: string) => {
  const res = await app.request(`/v1/search?${query}`);
  return { status: res.status, body: assertEnvelope(await res.json()) };
};

// deno-lint-ignore no-explicit-any
type Body = any;
/** Every locator a caller sees: the merged list and each attempt's candidates. */
const locators = (body: Body): string[] => [
  ...body.result.merged.map((m: { locator: string }) => m.locator),
  ...body.result.candidates.flatMap((a: Body) =>
    (a.candidates ?? []).map((c: { locator: string }) => c.locator)
  ),
];
const hostOf = (locator: string) => filterHost(locator) ?? "(none)";

describe("domain filters", () => {
  it("never returns an excluded host, its subdomains or its www. spellings, from any provider", async () => {
    const forms = [
      await postSearch({
        query: "x",
        scope: "web",
        limit: 20,
        filters: { domains: { exclude: ["www.evil.org"] } },
      }),
      await getSearch("q=x&scope=web&limit=20&exclude_domains=evil.org"),
    ];
    for (const { status, body } of forms) {
      assert.equal(status, 200);
      assert.equal(body.code, "ok");
      const seen = locators(body);
      assert.ok(seen.length > 0);
      for (const l of seen) {
        assert.ok(!hostMatches(hostOf(l), "evil.org"), `${l} came back`);
        assert.ok(!HOSTLESS.includes(l), `${l} has no host, so it cannot be judged`);
      }
      assert.deepEqual(
        [...new Set(body.result.merged.map((m: { locator: string }) => m.locator))].sort(),
        KEPT.sort(),
      );
      const [a, b] = body.result.candidates;
      assert.deepEqual([a.filtered_out, b.filtered_out], [
        EVIL.length + HOSTLESS.length,
        EVIL.length,
      ]);
      assert.deepEqual([a.candidate_count, b.candidate_count], [KEPT.length, KEPT.length]);
      assert.match(
        a.warnings.join("\n"),
        /dropped 9 candidate\(s\) that failed the search's filters/,
      );
    }
  });

  it("keeps only the included hosts and their subdomains", async () => {
    const { body } = await postSearch({
      query: "x",
      scope: "web",
      limit: 20,
      filters: { domains: { include: ["good.org", "docs.evil.org"] } },
    });
    assert.equal(body.code, "ok");
    assert.deepEqual(
      body.result.merged.map((m: { locator: string }) => m.locator).sort(),
      [
        "https://docs.evil.org/c",
        "https://evil.org.good.org/i",
        "https://good.org/h",
        "https://www.good.org/j",
      ],
    );
  });

  it("lets an exclusion win over an inclusion of the same host", async () => {
    const { body } = await getSearch(
      "q=x&providers=one&limit=20&domains=good.org&exclude_domains=evil.org.good.org",
    );
    assert.deepEqual(locators(body).sort(), [
      "https://good.org/h",
      "https://good.org/h",
      "https://www.good.org/j",
      "https://www.good.org/j",
    ]);
  });

  it("answers a provider whose every candidate was filtered out as an honest empty, and says so", async () => {
    const { body } = await postSearch({
      query: "x",
      providers: ["two"],
      limit: 20,
      filters: { domains: { include: ["nowhere.example"] } },
    });
    assert.equal(body.code, "ok");
    const [attempt] = body.result.candidates;
    assert.equal(attempt.outcome, "success");
    assert.equal(attempt.candidate_count, 0);
    assert.deepEqual(attempt.candidates, []);
    assert.equal(attempt.filtered_out, EVIL.length + KEPT.length);
    assert.match(attempt.message, /honest empty after filtering/);
    assert.match(
      attempt.warnings.join("\n"),
      /honest empty after filtering: all 10 candidate\(s\)/,
    );
    assert.deepEqual(body.result.merged, []);
  });

  it("leaves filtered_out out of the attempts of a search without filters", async () => {
    const { body } = await postSearch({ query: "x", scope: "web", filters: {} });
    for (const attempt of body.result.candidates) assert.equal("filtered_out" in attempt, false);
  });
});

describe("date filters", () => {
  it("never returns an undated or unreadable candidate, and keeps both boundary dates", async () => {
    for (
      const form of [
        await postSearch({
          query: "x",
          scope: "dated",
          limit: 50,
          filters: { published_after: "2025-01-01", published_before: "2025-12-31" },
        }),
        await getSearch(
          "q=x&scope=dated&limit=50&published_after=2025-01-01&published_before=2025-12-31",
        ),
      ]
    ) {
      const { body } = form;
      assert.equal(body.code, "ok");
      const [attempt] = body.result.candidates;
      assert.deepEqual(attempt.candidates.map((c: { locator: string }) => c.locator), DATED_KEPT);
      assert.equal(attempt.filtered_out, DATED.length - DATED_KEPT.length);
      for (const c of attempt.candidates) assert.notEqual(c.published_at, null);
    }
  });

  it("applies one bound alone, inclusively", async () => {
    const after = await getSearch("q=x&scope=dated&limit=50&published_after=2025-12-31");
    assert.deepEqual(
      after.body.result.merged.map((m: { locator: string }) => m.locator).sort(),
      [
        "https://d.org/day-after",
        "https://d.org/last",
        "https://d.org/last-second",
        "https://d.org/next-year-east",
        "https://d.org/written-date",
      ],
    );
    const before = await getSearch("q=x&scope=dated&limit=50&published_before=2024-12-31");
    assert.deepEqual(
      before.body.result.merged.map((m: { locator: string }) => m.locator),
      ["https://d.org/day-before"],
    );
  });
});

describe("what a provider receives", () => {
  it("never sends a filters field to a provider that was not declared to accept filters", async () => {
    const from = [one.requests.length, dates.requests.length];
    const { body } = await postSearch({
      query: "x",
      providers: ["one", "dates"],
      filters: {
        domains: { include: ["good.org"], exclude: ["evil.org"] },
        published_after: "2020-01-01",
      },
    });
    assert.equal(body.code, "ok");
    const sent = [...one.requests.slice(from[0]), ...dates.requests.slice(from[1])];
    assert.equal(sent.length, 2);
    for (const r of sent) {
      assert.deepEqual(Object.keys(JSON.parse(r.body)).sort(), [
        "action",
        "limit",
        "query",
        "schema_version",
      ]);
    }
  });

  it("sends a declared provider only the filters it declared, host names as compared", async () => {
    const raw = manifestOf([
      { name: "one", scope: "web", endpoint: one.url },
      { name: "two", scope: "web", endpoint: two.url },
    ]);
    const parsed = validateManifest(raw, { allowLoopback: true });
    assert.ok(parsed.ok);
    const request = parseSearchRequest({
      query: "x",
      filters: {
        domains: { include: ["www.good.org", "good.org"], exclude: ["evil.org"] },
        published_before: "2030-01-01",
      },
    });
    assert.ok(request.ok);
    const declared: Record<string, readonly FilterName[]> = { one: ["domains"], two: [] };
    const deps: SearchDeps = {
      manifest: parsed.manifest,
      maxProviders: 32,
      entitlement: () => "granted",
      unavailable: () => null,
      now: () => performance.now(),
      clientFor: (spec) =>
        httpProvider({
          name: spec.name,
          scope: spec.scope,
          endpoint: spec.endpoint as string,
          exchange: exchangeOverFetch(globalThis.fetch),
          now: Date.now,
        }),
      gateFor: () => new Semaphore(4),
      maxPendingConnections: null,
      headersFor: null,
      acceptsFilters: (spec) => declared[spec.name] ?? [],
      searchBudgetBytes: 16_000_000,
    };
    const planned = planSearch(request.request, deps);
    assert.ok(planned.ok);
    const from = [one.requests.length, two.requests.length];
    const done = await executePlan({
      request: request.request,
      plan: planned.plan,
      deps,
      requestId: "r",
      signal: new AbortController().signal,
    });
    assert.equal(done.code, "ok");
    const [toOne] = one.requests.slice(from[0]).map((r) => JSON.parse(r.body));
    const [toTwo] = two.requests.slice(from[1]).map((r) => JSON.parse(r.body));
    assert.deepEqual(toOne.filters, { domains: { include: ["good.org"], exclude: ["evil.org"] } });
    assert.ok(validators.providerRequest(toOne), JSON.stringify(validators.providerRequest.errors));
    assert.equal("filters" in toTwo, false);
    // The gateway still applies every filter, whatever the provider was sent.
    for (const attempt of done.result.candidates ?? []) {
      for (const c of attempt.candidates ?? []) {
        assert.ok(hostMatches(hostOf(c.locator), "good.org"), c.locator);
      }
    }
  });
});

describe("filter helpers", () => {
  it("reads hosts the way the dedup key compares them", () => {
    assert.equal(filterHost("https://WWW.Example.ORG:443/a"), "example.org");
    assert.equal(filterHost("http://www.www.example.org/"), "www.example.org");
    assert.equal(filterHost("https://example.org./"), "example.org");
    assert.equal(filterHost("https://[::1]/"), "[::1]");
    assert.equal(filterHost("urn:x"), null);
    assert.equal(filterHost("https://"), null);
    assert.equal(filterHost("//example.org/a"), null);
  });

  it("matches a host and its subdomains, never a longer name that ends alike", () => {
    assert.equal(hostMatches("example.org", "example.org"), true);
    assert.equal(hostMatches("a.b.example.org", "example.org"), true);
    assert.equal(hostMatches("badexample.org", "example.org"), false);
    assert.equal(hostMatches("example.org.evil.net", "example.org"), false);
    assert.equal(hostMatches("10.0.0.1", "0.0.1"), false);
    assert.equal(hostMatches("10.0.0.1", "10.0.0.1"), true);
  });

  it("reads a publication day only from RFC 3339 text", () => {
    assert.equal(publishedDay("1970-01-02"), 1);
    assert.equal(publishedDay("1970-01-02T23:59:59-12:00"), 1);
    assert.equal(publishedDay("2024-02-29"), publishedDay("2024-03-01")! - 1);
    for (const bad of [null, "", "2023-02-29", "2025-1-1", "2025-01-01T25:00:00Z", "yesterday"]) {
      assert.equal(publishedDay(bad), null, String(bad));
    }
  });

  it("sends nothing to a provider that declared none of the filters in use", () => {
    assert.equal(filtersFor({ published_after: "2025-01-01" }, ["domains"]), null);
    assert.deepEqual(
      filtersFor({ published_after: "2025-01-01", published_before: "2025-02-01" }, [
        "published_before",
      ]),
      { published_before: "2025-02-01" },
    );
  });

  it("skips for filter_unsupported only for a filter neither the provider nor the gateway can apply", () => {
    const all = { domains: { include: ["a.org"] }, published_after: "2025-01-01" };
    // Every filter there is today is one the gateway evaluates: never a skip.
    assert.equal(skipForFilters(all, []), false);
    // A gateway that could not evaluate domains (a stand-in for a future provider-only filter).
    const onlyDates = new Set<FilterName>(["published_after", "published_before"]);
    assert.equal(skipForFilters(all, [], onlyDates), true);
    assert.equal(skipForFilters(all, ["domains"], onlyDates), false);
    assert.equal(skipForFilters({ published_after: "2025-01-01" }, [], onlyDates), false);
  });
});

describe("the documented examples", () => {
  const example = (doc: string, heading: string) => {
    const text = readFileSync(new URL(`../docs/${doc}`, import.meta.url), "utf8");
    const section = text.slice(text.indexOf(heading));
    const block = /```json\n([\s\S]*?)```/.exec(section);
    assert.ok(block, `no JSON example under ${heading} in ${doc}`);
    return JSON.parse(block[1] as string);
  };

  it("accepts the filters example of docs/envelope.md in the parser and the JSON Schema", () => {
    const body = example("envelope.md", "## Filters");
    assert.ok(validators.searchRequest(body), JSON.stringify(validators.searchRequest.errors));
    assert.deepEqual(parseSearchRequest(body).ok, true);
  });

  it("accepts the provider request example with filters of docs/protocol.md", () => {
    const body = example("protocol.md", "### Filters");
    assert.ok(validators.providerRequest(body), JSON.stringify(validators.providerRequest.errors));
  });
});

describe("refused filters", () => {
  const refusals: Array<[string, unknown, string, string]> = [
    ["an unknown filter", { colour: "red" }, "unknown_field", "filters.colour"],
    [
      "an unknown domains list",
      { domains: { only: ["a.org"] } },
      "unknown_field",
      "filters.domains.only",
    ],
    ["a null filters", null, "null_field", "filters"],
    ["a null list", { domains: { include: null } }, "null_field", "filters.domains.include"],
    ["a null date", { published_before: null }, "null_field", "filters.published_before"],
    ["filters as a list", [], "invalid_field", "filters"],
    [
      "a list as text",
      { domains: { include: "a.org" } },
      "invalid_field",
      "filters.domains.include",
    ],
    [
      "a host in capitals",
      { domains: { include: ["A.org"] } },
      "invalid_field",
      "filters.domains.include",
    ],
    [
      "a URL as a host",
      { domains: { exclude: ["https://a.org"] } },
      "invalid_field",
      "filters.domains.exclude",
    ],
    [
      "a host with a port",
      { domains: { exclude: ["a.org:443"] } },
      "invalid_field",
      "filters.domains.exclude",
    ],
    [
      "a leading dot",
      { domains: { exclude: [".a.org"] } },
      "invalid_field",
      "filters.domains.exclude",
    ],
    ["an empty list", { domains: { exclude: [] } }, "invalid_field", "filters.domains.exclude"],
    [
      "33 names",
      { domains: { include: Array(33).fill("a.org") } },
      "invalid_field",
      "filters.domains.include",
    ],
    [
      "a date-time as a date",
      { published_after: "2025-01-01T00:00:00Z" },
      "invalid_field",
      "filters.published_after",
    ],
    [
      "a day February lacks",
      { published_before: "2025-02-29" },
      "invalid_field",
      "filters.published_before",
    ],
    [
      "after later than before",
      { published_after: "2025-02-02", published_before: "2025-02-01" },
      "invalid_field",
      "filters.published_after",
    ],
  ];
  for (const [what, filters, code, field] of refusals) {
    it(`refuses ${what} with ${code} naming ${field}, contacting no provider`, async () => {
      const before = one.requests.length + two.requests.length + dates.requests.length;
      const { status, body } = await postSearch({ query: "x", filters });
      assert.deepEqual([status, body.code, body.error.field], [400, code, field]);
      assert.equal(one.requests.length + two.requests.length + dates.requests.length, before);
    });
  }

  it("refuses a repeated filter parameter naming the field it fills", async () => {
    for (
      const [query, field] of [
        ["q=x&domains=a.org&domains=b.org", "filters.domains.include"],
        ["q=x&published_after=2025-01-01&published_after=2025-01-01", "filters.published_after"],
      ]
    ) {
      const { status, body } = await getSearch(query as string);
      assert.deepEqual([status, body.code, body.error.field], [400, "invalid_field", field]);
    }
  });

  it("tells a body that used a GET parameter's name where the filter goes", async () => {
    const { body } = await postSearch({ query: "x", exclude_domains: ["a.org"] });
    assert.equal(body.code, "unknown_field");
    assert.match(body.error.message, /"filters": \{"domains": \{"exclude"/);
  });

  it("accepts the same day as both bounds", async () => {
    const { status } = await getSearch(
      "q=x&scope=dated&published_after=2025-01-01&published_before=2025-01-01",
    );
    assert.equal(status, 200);
  });
});
