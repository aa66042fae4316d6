/**
 * npm test's counting (scripts/test-tally.ts) over reports as node:test and Deno write them: each
 * test counted once as a leaf, never the describe around it; skips apart; a file that fails before
 * any test is one failure; each failure named by its path with its error. And what npm test
 * (scripts/run-tests.ts) says of a suite this machine cannot run.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { denoStuckTest, junitTally, type TapFailure, TapTally } from "../scripts/test-tally.ts";
import { needs } from "../scripts/run-tests.ts";

/** node --test --test-reporter=tap over a file with a describe and a file that throws at import. */
const NODE_TAP = `TAP version 13
# hello out
# Subtest: s
    # Subtest: p
    ok 1 - p
      ---
      duration_ms: 4.11601
      ...
    # Subtest: k
    ok 2 - k # SKIP why
      ---
      duration_ms: 0.191135
      ...
    # Subtest: inner
        # Subtest: deep
        ok 1 - deep
          ---
          duration_ms: 0.1
          ...
        1..1
    ok 3 - inner
      ---
      duration_ms: 0.3
      type: 'suite'
      ...
    # Subtest: f
    not ok 4 - f
      ---
      duration_ms: 0.424752
      location: '/tmp/a.test.mjs:2:105'
      failureType: 'testCodeFailure'
      error: |-
        Expected values to be strictly equal:
        1 !== 2
      code: 'ERR_ASSERTION'
      stack: |-
        TestContext.<anonymous> (file:///tmp/a.test.mjs:2:127)
      ...
    1..4
not ok 1 - s
  ---
  duration_ms: 6.550973
  type: 'suite'
  error: '1 subtest failed'
  ...
# Subtest: top
ok 2 - top
  ---
  duration_ms: 0.523169
  ...
# Error: import boom
# Subtest: /tmp/b.test.mjs
not ok 3 - /tmp/b.test.mjs
  ---
  duration_ms: 164.243081
  failureType: 'testCodeFailure'
  error: 'test failed'
  ...
1..3
# tests 5
# pass 3
# fail 2
`;

/** deno test --junit-path over a describe with a nested describe, a skip and a failure. */
const DENO_JUNIT = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="deno test" tests="9" failures="2" errors="0" time="0.021">
    <testsuite name="./c_test.ts" tests="4" disabled="1" errors="0" failures="1">
        <testcase name="s" classname="./c_test.ts" time="0.008" line="2" col="1">
            <failure message="1 test step failed">1 test step failed.</failure>
        </testcase>
        <testcase name="top" classname="./c_test.ts" time="0.000" line="3" col="1">
        </testcase>
        <testcase name="ign" classname="./c_test.ts" time="0.000" line="5" col="6">
            <skipped/>
        </testcase>
    </testsuite>
    <testsuite name="ext:deno_node/testing.ts" tests="5" disabled="1" errors="0" failures="1">
        <testcase name="s &gt; p" classname="ext:deno_node/testing.ts" time="0.001" line="1" col="2">
        </testcase>
        <testcase name="s &gt; k" classname="ext:deno_node/testing.ts" time="0.000" line="1" col="2">
            <skipped/>
        </testcase>
        <testcase name="s &gt; f &amp; g" classname="ext:deno_node/testing.ts" time="0.002" line="1" col="2">
            <failure message="Uncaught Error: boom">Error: boom
    at NodeTestContext.&lt;anonymous&gt; (file:///tmp/c_test.ts:2:139)</failure>
        </testcase>
        <testcase name="s &gt; inner" classname="ext:deno_node/testing.ts" time="0.001" line="1" col="2">
        </testcase>
        <testcase name="s &gt; inner &gt; deep" classname="ext:deno_node/testing.ts" time="0.000" line="1" col="2">
        </testcase>
    </testsuite>
</testsuites>
`;

describe("npm test's counting", () => {
  it("node:test's TAP: leaves only, skips apart, a file failing at import is one failure", () => {
    const seen: TapFailure[] = [];
    const tally = new TapTally((f) => seen.push(f));
    for (const line of NODE_TAP.split("\n")) tally.line(line);
    tally.end();
    assert.deepEqual(tally.counts, { passed: 3, failed: 2, skipped: 1 });
    assert.deepEqual(seen.map((f) => f.name), ["s > f", "/tmp/b.test.mjs"]);
    assert.deepEqual(seen[0]?.detail, [
      "location: '/tmp/a.test.mjs:2:105'",
      "failureType: 'testCodeFailure'",
      "error: |-",
      "  Expected values to be strictly equal:",
      "  1 !== 2",
    ]);
  });

  it("Deno's JUnit: steps are tests, a test or step with steps is a group, names unescaped", () => {
    const { counts, failures } = junitTally(DENO_JUNIT);
    assert.deepEqual(counts, { passed: 3, failed: 1, skipped: 2 });
    assert.deepEqual(failures, [{
      name: "s > f & g",
      detail: ["Error: boom", "    at NodeTestContext.<anonymous> (file:///tmp/c_test.ts:2:139)"],
    }]);
  });

  it("no report at all counts nothing: the runner then fails the suite by its exit code", () => {
    assert.deepEqual(junitTally("").counts, { passed: 0, failed: 0, skipped: 0 });
  });

  it("a Deno test still running past the bound is named from Deno's own line; sooner, or any other line, is not", () => {
    const line = (time: string) =>
      `'every answer agrees (Prism)' has been running for over (${time})`;
    assert.equal(denoStuckTest(line("8m0s"), 480_000), "every answer agrees (Prism)");
    assert.equal(denoStuckTest(`${line("16m0s")}\r`, 480_000), "every answer agrees (Prism)");
    assert.equal(denoStuckTest(line("4m0s"), 480_000), null);
    assert.equal(denoStuckTest(line("30s"), 20_000), "every answer agrees (Prism)");
    assert.equal(denoStuckTest("  /v1/fetch: every case of the table ... ok (8m0s)", 1_000), null);
  });

  it("without a browser or redis-server, each suite that needs one is named with why, and only its files", async () => {
    const [browser, redis] = await needs({
      TRACEFETCH_CHROMIUM: "/nonexistent/chromium",
      PATH: "/nonexistent",
    });
    assert.equal(browser?.found, null);
    assert.match(browser?.missing ?? "", /^TRACEFETCH_CHROMIUM names \/nonexistent\/chromium/);
    assert.ok(browser?.files("tests/browser-page.test.ts"));
    assert.ok(!browser?.files("tests/page-route.test.ts"));
    assert.equal(redis?.found, null);
    assert.match(redis?.missing ?? "", /^redis-server is not installed/);
    assert.ok(redis?.files("tests/state-redis.test.ts"));
    assert.ok(!redis?.files("tests/state-contract.test.ts"));
  });
});
