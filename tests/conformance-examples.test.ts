/**
 * Conformance of the example providers that bridge to something else: the SearXNG bridge and the
 * papers (OpenAlex) provider, each over a fake upstream on 127.0.0.1 that answers from
 * tests/fixtures/recordings/, and the command bridge over the well-behaved test command. Each
 * passes every case and replays tests/fixtures/conformance/<name>.txt. Regenerate the transcripts
 * after an intended change with
 * `UPDATE_FIXTURES=1 node --import tsx --test tests/conformance-examples.test.ts`.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { isDeepStrictEqual } from "node:util";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { commandBridge } from "../providers/command-bridge/bridge.ts";
import { readCommandManifest } from "../providers/command-bridge/command-manifest.ts";
import { openAlexAdapter, openAlexConfig } from "../providers/papers/openalex-adapter.ts";
import { searxngAdapter, searxngConfig } from "../providers/searxng/searxng-adapter.ts";
import { serveProvider } from "../src/kit/serve-provider.ts";
import { CONFORMANCE_CASES, NONSENSE_QUERY_PREFIX, runConformance } from "../src/kit/mod.ts";
import { listen } from "../src/runtime/node-listen.ts";
import type { SearchAdapter } from "../src/protocol/provider-contract.ts";
import { assertConformsAndReplays } from "./support/conformance.ts";
import { recording } from "./support/recordings.ts";
import { startServer, type TestServer } from "./support/servers.ts";

/** Long enough for a child process per search on a slow machine; a hung provider still fails. */
const CASE_TIMEOUT_MS = 5_000;

/**
 * The cases the provider must answer itself: none of them may reach the upstream. Every other case
 * (each search, and the health probe) reaches it once.
 */
const REFUSALS = [
  "malformed-missing-query",
  "malformed-not-json",
  "unsupported-action",
  "describe",
  "expand",
  "expand-unknown-locator",
  "refresh",
];

type Body = Record<string, unknown>;

type Upstream = {
  /** The recording (tests/fixtures/recordings/<file>.json) a search for its query is answered from. */
  file: string;
  /** The query parameter that carries the search text. */
  text: string;
  /** The query parameter that carries the page size, when the service is asked for `limit` results. */
  pageSize?: string;
  /** The recorded body with no results: what the service answers for a query that matches nothing. */
  empty: (recorded: Body, query: string) => Body;
};

/**
 * A fake upstream on 127.0.0.1: the recorded answer to the recorded request (cut to the page size
 * asked for, as the service would), `empty` for the conformance nonsense query, and a 500 naming
 * the difference for any other request, so an adapter that asks otherwise than the recording fails
 * loudly instead of passing on a guess.
 */
function fakeUpstream(u: Upstream): Promise<TestServer> {
  const rec = recording(u.file);
  const recorded = rec.response.body as Body;
  return startServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://upstream.invalid");
    const asked = Object.fromEntries(url.searchParams);
    const query = asked[u.text] ?? "";
    const expected = { ...rec.request.query, [u.text]: query };
    if (u.pageSize !== undefined) expected[u.pageSize] = asked[u.pageSize] ?? "";
    const same = req.method === rec.request.method && url.pathname === rec.request.path &&
      isDeepStrictEqual(asked, expected);
    let body: Body;
    if (same && query === rec.request.query?.[u.text]) {
      const size = u.pageSize === undefined ? Infinity : Number(asked[u.pageSize]);
      body = { ...recorded, results: (recorded.results as unknown[]).slice(0, size) };
    } else if (same && query.startsWith(NONSENSE_QUERY_PREFIX)) {
      body = u.empty(recorded, query);
    } else {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: `no recording for ${req.method} ${req.url}` }));
      return;
    }
    res.writeHead(rec.response.status, rec.response.headers);
    res.end(JSON.stringify(body));
  });
}

type Bridging = {
  name: string;
  scope: string;
  upstream: Upstream;
  /** The adapter over the upstream at `base`, configured as the recording's request expects. */
  adapter: (base: string) => SearchAdapter;
};

const BRIDGING: Bridging[] = [
  {
    name: "searxng",
    scope: "web",
    upstream: {
      file: "searxng-search",
      text: "q",
      // SearXNG answers a query no engine matches with empty lists and no failed engine.
      empty: (recorded, query) => ({
        ...recorded,
        query,
        number_of_results: 0,
        results: [],
        suggestions: [],
        unresponsive_engines: [],
      }),
    },
    adapter: (base) =>
      searxngAdapter(searxngConfig({ base, categories: "general,science", language: "en" })),
  },
  {
    name: "papers",
    scope: "papers",
    upstream: {
      file: "openalex-works",
      text: "search",
      pageSize: "per-page",
      // OpenAlex answers a search no work matches with a count of 0 and no results.
      empty: (recorded) => ({
        ...recorded,
        meta: { ...(recorded.meta as Body), count: 0 },
        results: [],
      }),
    },
    adapter: (base) =>
      openAlexAdapter(openAlexConfig({ base, mailto: "research-tools@example.org" })),
  },
];

describe("conformance: the SearXNG and papers providers over their recorded upstreams", () => {
  for (const p of BRIDGING) {
    it(`${p.name} passes every case and replays tests/fixtures/conformance/${p.name}.txt`, async () => {
      const upstream = await fakeUpstream(p.upstream);
      const app = serveProvider(p.adapter(`http://127.0.0.1:${upstream.port}/`));
      const server = await listen(app.fetch, "127.0.0.1", 0);
      try {
        const report = await runConformance(`http://127.0.0.1:${server.port}/search`, {
          name: p.name,
          scope: p.scope,
          // The recorded query, so the limit cases see the recorded results.
          query: recording(p.upstream.file).request.query?.[p.upstream.text] ?? "",
          timeoutMs: CASE_TIMEOUT_MS,
        });
        await assertConformsAndReplays(report, p.name);
        assert.equal(
          upstream.requests.length,
          CONFORMANCE_CASES.length - REFUSALS.length,
          "every search and the health probe reached the upstream once, and nothing else did",
        );
      } finally {
        await server.close();
        await upstream.close();
      }
    });
  }
});

describe("conformance: the command bridge", () => {
  it("the well-behaved command behind the bridge passes every case and replays tests/fixtures/conformance/command-bridge.txt", async () => {
    const manifest = await readCommandManifest(
      fileURLToPath(new URL("./fixtures/commands/tracefetch-1.0.json", import.meta.url)),
    );
    const good = manifest.providers.find((p) => p.name === "good");
    assert.ok(good, 'the manifest serves the well-behaved command as "good"');
    // The command echoes this variable into every candidate; pinned so the transcript is the same
    // whichever test ran before in this process.
    const saved = process.env.TRACEFETCH_FIXTURE_ENV;
    process.env.TRACEFETCH_FIXTURE_ENV = "inherited";
    const bridge = commandBridge([good]);
    const server = await listen(bridge.fetch, "127.0.0.1", 0);
    try {
      const report = await runConformance(`http://127.0.0.1:${server.port}/${good.name}`, {
        name: good.name,
        scope: good.scope,
        timeoutMs: CASE_TIMEOUT_MS,
      });
      await assertConformsAndReplays(report, "command-bridge");
    } finally {
      await bridge.stop();
      await server.close();
      if (saved === undefined) delete process.env.TRACEFETCH_FIXTURE_ENV;
      else process.env.TRACEFETCH_FIXTURE_ENV = saved;
    }
  });
});
