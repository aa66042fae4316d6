/**
 * Bounds and sanitising of one provider's answer (docs/protocol.md): body caps, hostile nesting,
 * prototype keys, secret-named metadata, clipping and truncation, each through a real gateway.
 */
import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { gzipSync } from "node:zlib";
import { type Handler } from "./support/servers.ts";
import {
  assertFailed,
  assertNoLeak,
  type FaultyRun,
  faultySearch,
  HEALTHY,
  LEAKY_HEADERS,
  responseBody,
} from "./support/outcomes.ts";

const MiB = 1024 * 1024;

function ok200(body: string | Uint8Array, headers: Record<string, string> = {}): Handler {
  return (_req, res) => {
    res.writeHead(200, { "content-type": "application/json", ...LEAKY_HEADERS, ...headers });
    res.end(body);
  };
}

/** The answer of the "faulty" provider with one candidate, its JSON spliced in as text. */
function withMetadataText(metadataJson: string): string {
  return '{"schema_version":"tracefetch.provider-response.v1","provider":"faulty","scope":"faulty",' +
    `"candidates":[{"title":"Meta","locator":"https://meta.example/1","metadata":${metadataJson}}]}`;
}

/** A search where the provider under test succeeded: the search is ok, not partial. */
function assertBothSucceeded(run: FaultyRun): void {
  assert.equal(run.res.status, 200);
  assert.equal(run.body.code, "ok");
  assert.equal(run.attempt.outcome, "success");
  assert.equal(run.attempt.code, "ok");
  assert.equal(run.healthy.outcome, "success");
  assert.ok(run.body.result.merged.some((m: { locator: string }) => m.locator === HEALTHY.locator));
  assertNoLeak(run);
}

const protocolError = (code: string) => ({
  outcome: "provider_protocol_error",
  code,
  retryable: false,
});

describe("provider bounds: the decoded body", () => {
  let bomb: Uint8Array;
  before(() => {
    bomb = gzipSync(new Uint8Array(64 * MiB));
  });

  it("a 5 MB body is provider_protocol_error/body_too_large", async () => {
    const body = responseBody("faulty", [{ ...HEALTHY, snippet: "a".repeat(5_000_000) }]);
    assertFailed(await faultySearch(ok200(body)), protocolError("body_too_large"));
  });

  it("a gzip body decoding to 64 MiB is body_too_large and the process RSS grows less than 64 MiB", async () => {
    assert.ok(bomb.byteLength < 200_000, `the bomb is ${bomb.byteLength} bytes compressed`);
    // Warm up the HTTP client so its one-time allocations are not charged to the bomb.
    await faultySearch(ok200(responseBody("faulty", [])));
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 2);
    let run: FaultyRun;
    try {
      run = await faultySearch(ok200(bomb, { "content-encoding": "gzip" }));
    } finally {
      clearInterval(sampler);
    }
    peak = Math.max(peak, process.memoryUsage().rss);
    assertFailed(run, protocolError("body_too_large"));
    // A naive res.text() peaks above 200 MiB here; the bounded reader stays near its 2 MB cap.
    const grown = (peak - baseline) / MiB;
    assert.ok(grown < 64, `RSS grew ${grown.toFixed(1)} MiB while reading the bomb`);
  });
});

describe("provider bounds: hostile JSON", () => {
  const depth = 100_000;

  it("metadata nested 100,000 deep is cut at depth 2 and the attempt succeeds", async () => {
    const objects = '{"n":1,"a":'.repeat(depth) + "1" + "}".repeat(depth);
    const arrays = "[1,".repeat(depth) + "1" + "]".repeat(depth);
    const run = await faultySearch(
      ok200(withMetadataText(`{"kept":"yes","deep":${objects},"deep_list":${arrays}}`)),
    );
    assertBothSucceeded(run);
    assert.equal(run.attempt.candidate_count, 1);
    assert.equal(
      JSON.stringify(run.attempt.candidates[0].metadata),
      '{"kept":"yes","deep":{"n":1},"deep_list":[1]}',
    );
  });

  it("a whole body nested 100,000 deep is a schema_violation, not a crash", async () => {
    const nested = '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
    assertFailed(await faultySearch(ok200(nested)), protocolError("schema_violation"));
    const list = "[".repeat(depth) + "]".repeat(depth);
    assertFailed(await faultySearch(ok200(list)), protocolError("schema_violation"));
  });

  it("__proto__, constructor and prototype keys are dropped and Object.prototype is not polluted", async () => {
    const poison =
      '{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},' +
      '"prototype":{"polluted":"yes"},"ok":1,' +
      '"nested":{"__proto__":{"polluted":"yes"},"constructor":"c","prototype":"p","ok":2}}';
    const run = await faultySearch(ok200(withMetadataText(poison)));
    assertBothSucceeded(run);
    assert.equal(JSON.stringify(run.attempt.candidates[0].metadata), '{"ok":1,"nested":{"ok":2}}');
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(Object.hasOwn(Object.prototype, "polluted"), false);
    for (const word of ["__proto__", "polluted", '"constructor"', '"prototype"']) {
      assert.equal(run.text.includes(word), false, `${word} reached the response`);
    }
  });

  it("credential-named metadata keys are removed at depth 1 and 2; their values appear nowhere", async () => {
    const secretKeys = [
      "authorization",
      "api_key",
      "password",
      "session_id",
      "private-key",
      "cookie",
      "secret_thing",
      "accessToken",
    ];
    const values = (depthTag: string) =>
      Object.fromEntries(secretKeys.map((k, i) => [k, `val-${depthTag}-${i}-9c1e`]));
    const metadata = {
      ...values("d1"),
      author: "Ada",
      citation_count: 12,
      nested: { ...values("d2"), venue: "ICSE", stars: 5 },
    };
    const run = await faultySearch(
      ok200(responseBody("faulty", [{ ...HEALTHY, locator: "https://m.example/1", metadata }])),
    );
    assertBothSucceeded(run);
    assert.deepEqual(JSON.parse(JSON.stringify(run.attempt.candidates[0].metadata)), {
      author: "Ada",
      citation_count: 12,
      nested: { venue: "ICSE", stars: 5 },
    });
    assertNoLeak(run, [...Object.values(values("d1")), ...Object.values(values("d2"))]);
  });

  it("metadata keeps at most 32 keys, 20 array items and 1,000-character strings", async () => {
    const metadata: Record<string, unknown> = {
      list: Array.from({ length: 30 }, (_, i) => i),
      long: "z".repeat(1_500),
    };
    for (let i = 0; i < 40; i++) metadata[`k${String(i).padStart(2, "0")}`] = i;
    const run = await faultySearch(
      ok200(responseBody("faulty", [{ ...HEALTHY, locator: "https://m.example/2", metadata }])),
    );
    assertBothSucceeded(run);
    const kept = run.attempt.candidates[0].metadata;
    assert.equal(Object.keys(kept).length, 32);
    assert.deepEqual(kept.list, Array.from({ length: 20 }, (_, i) => i));
    assert.equal(kept.long, "z".repeat(988) + " [truncated]");
    assert.equal(kept.k29, 29);
    assert.equal("k30" in kept, false);
  });
});

describe("provider bounds: candidates and fields", () => {
  const candidate = (i: number) => ({ title: `T${i}`, locator: `https://c.example/${i}` });

  it("more candidates than the limit are clipped to the limit with a warning", async () => {
    const many = [1, 2, 3, 4, 5].map(candidate);
    const run = await faultySearch(ok200(responseBody("faulty", many)), {
      params: { limit: "3" },
    });
    assertBothSucceeded(run);
    assert.equal(run.attempt.candidate_count, 3);
    assert.deepEqual(
      run.attempt.candidates.map((c: { locator: string }) => c.locator),
      ["https://c.example/1", "https://c.example/2", "https://c.example/3"],
    );
    assert.deepEqual(run.attempt.warnings, ["clipped 2 candidate(s) beyond the limit of 3"]);
    assert.equal(run.body.result.merged.length, 3);
  });

  it("a 3,000-character locator drops that candidate with a warning; the others are kept", async () => {
    const long = `https://c.example/${"p".repeat(2_982)}`;
    assert.equal(long.length, 3_000);
    const run = await faultySearch(
      ok200(responseBody("faulty", [candidate(1), { title: "Long", locator: long }, candidate(3)])),
    );
    assertBothSucceeded(run);
    assert.equal(run.attempt.candidate_count, 2);
    assert.deepEqual(
      run.attempt.candidates.map((c: { locator: string }) => c.locator),
      ["https://c.example/1", "https://c.example/3"],
    );
    assert.deepEqual(run.attempt.warnings, [
      "dropped 1 candidate(s) whose locator exceeded 2000 characters",
    ]);
    assert.equal(run.text.includes("p".repeat(2_000)), false);
  });

  it("title, snippet and published_at over their limits are cut with ' [truncated]' inside the limit and listed", async () => {
    const run = await faultySearch(ok200(responseBody("faulty", [{
      title: "𝒳".repeat(400),
      locator: "https://c.example/t",
      snippet: "s".repeat(2_000),
      published_at: "2".repeat(150),
    }, {
      title: "  spaced \n\t title  ",
      locator: "https://c.example/u",
      snippet: "é".repeat(1_600),
    }])));
    assertBothSucceeded(run);
    const [cut, fits] = run.attempt.candidates;
    assert.equal(cut.title, "𝒳".repeat(288) + " [truncated]");
    assert.equal(Array.from(cut.title).length, 300);
    assert.equal(cut.snippet, "s".repeat(1_588) + " [truncated]");
    assert.equal(cut.published_at, "2".repeat(88) + " [truncated]");
    assert.deepEqual(cut.truncated, ["title", "snippet", "published_at"]);
    assert.equal(fits.title, "spaced title");
    assert.equal(fits.snippet, "é".repeat(1_600));
    assert.deepEqual(fits.truncated, []);
  });

  it("lone surrogates (JSON escapes) in any text become U+FFFD: strict JSON parsers accept the envelope", async () => {
    // Escapes a provider's JSON may carry; the bytes themselves are valid UTF-8.
    const body = '{"schema_version":"tracefetch.provider-response.v1","provider":"faulty",' +
      '"scope":"faulty","candidates":[{"title":"a\\ud800b","locator":"https://c.example/\\udfff",' +
      '"snippet":"\\udc00 s","published_at":"2025\\ud83d","metadata":{"k\\ud800":"v\\udc01"}}],' +
      '"warnings":["w\\ud800"]}';
    const run = await faultySearch(ok200(body));
    assertBothSucceeded(run);
    const [c] = run.attempt.candidates;
    assert.equal(c.title, "a\ufffdb");
    assert.equal(c.locator, "https://c.example/\ufffd");
    assert.equal(c.snippet, "\ufffd s");
    assert.equal(c.published_at, "2025\ufffd");
    assert.deepEqual({ ...c.metadata }, { "k\ufffd": "v\ufffd" });
    assert.ok(run.attempt.warnings.includes("w\ufffd"), JSON.stringify(run.attempt.warnings));
    assert.equal(/\\ud[89a-f][0-9a-f]{2}/i.test(run.text), false, "no surrogate escape left");
  });
});
