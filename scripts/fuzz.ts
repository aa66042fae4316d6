/**
 * `npm run fuzz`: the property tests at length on Node, 100,000 runs each, one suite after the
 * other so each has the machine to itself: generated provider answers to a search
 * (tests/provider-fuzz.test.ts), generated search requests, GET against POST
 * (tests/request-property.test.ts), generated requests to POST /v1/expand and /v1/refresh
 * (tests/action-request-fuzz.test.ts), generated provider answers to expand and refresh
 * (tests/action-answer-fuzz.test.ts) and generated JSON-RPC to POST /mcp
 * (tests/mcp-fuzz.test.ts). On a 2-core machine the last three take about 5, 15 and 4 minutes.
 * TRACEFETCH_FUZZ_RUNS changes the count, TRACEFETCH_FUZZ_SEED replays a seed.
 * Exit 0: every suite passed; 1: some suite failed.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import process from "node:process";
import { fileURLToPath } from "node:url";

const RUNS = process.env.TRACEFETCH_FUZZ_RUNS || "100000";
const SUITES = [
  "tests/provider-fuzz.test.ts",
  "tests/request-property.test.ts",
  "tests/action-request-fuzz.test.ts",
  "tests/action-answer-fuzz.test.ts",
  "tests/mcp-fuzz.test.ts",
];

const root = fileURLToPath(new URL("..", import.meta.url));
const failed: string[] = [];
for (const suite of SUITES) {
  if (!existsSync(new URL(`../${suite}`, import.meta.url))) {
    console.log(`${suite}: not present, skipped`);
    continue;
  }
  console.log(`${suite}: ${RUNS} runs`);
  const started = performance.now();
  const run = spawnSync(process.execPath, ["--import", "tsx", "--test", suite], {
    cwd: root,
    stdio: "inherit",
    env: { ...process.env, TRACEFETCH_FUZZ_RUNS: RUNS },
  });
  const seconds = ((performance.now() - started) / 1_000).toFixed(0);
  const passed = run.status === 0;
  console.log(`${suite}: ${passed ? "passed" : "FAILED"} in ${seconds} s`);
  if (!passed) failed.push(suite);
}
if (failed.length > 0) console.error(`failed: ${failed.join(", ")}`);
process.exit(failed.length > 0 ? 1 : 0);
