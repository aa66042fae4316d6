/**
 * `npm test`: the checks, then the Node, Deno and workerd suites, each counted from its runner's
 * machine-readable report (node:test's `tap` reporter, Deno's JUnit report; scripts/test-tally.ts),
 * ending with one line of totals across them: `N passed, N failed`. Exit 1 when any check or test
 * failed, or a suite ended badly without a failing test to show for it.
 *
 * - Before the suites, the browser tests' Chromium is unpacked from npm once
 *   (scripts/test-chromium.ts). A suite that cannot run on this machine (no browser, no
 *   redis-server) is named in one line and left out; the others still run.
 * - The three suites run at once (Deno's in two processes): most of their time is spent waiting
 *   (timers, child processes, sockets), so on two cores they overlap well; the checks run first,
 *   alone, as they use the CPU.
 * - Each suite's whole output is written to test-results/ (node.tap, workerd.tap, deno-N.log with
 *   deno-N.junit.xml, checks.log); the terminal gets a line per failure, each suite's counts and
 *   time, the fuzz suites' run counts, and the totals.
 *
 * `node --import tsx scripts/run-tests.ts [node] [deno] [workerd] [--no-checks]` runs only the
 * suites named.
 */
import { spawn } from "node:child_process";
import { createWriteStream, existsSync, type WriteStream } from "node:fs";
import { mkdir, readdir, readFile, rm } from "node:fs/promises";
import { delimiter, join, relative } from "node:path";
import process from "node:process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import {
  denoStuckTest,
  junitTally,
  type TapCounts,
  type TapFailure,
  TapTally,
} from "./test-tally.ts";
import { chromiumVersion, testChromium } from "./test-chromium.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const RESULTS = join(ROOT, "test-results");
const BIN = join(ROOT, "node_modules", ".bin");

/** Wrangler and Miniflare, offline and quiet, as package.json's test:workerd sets them. */
const OFFLINE_WRANGLER = {
  WRANGLER_SEND_METRICS: "false",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
  WRANGLER_HIDE_BANNER: "true",
};

/** The checks of package.json's `check`, each on its own line. */
const CHECKS: Array<{ name: string; argv: string[] }> = [
  { name: "imports", argv: ["npm", "run", "-s", "check:imports"] },
  { name: "types", argv: [join(BIN, "tsc"), "-p", "tsconfig.json"] },
  { name: "deno check", argv: [join(BIN, "deno"), "check", "src/runtime/deno.ts"] },
  { name: "deno lint", argv: [join(BIN, "deno"), "lint"] },
  { name: "deno fmt", argv: [join(BIN, "deno"), "fmt", "--check"] },
  { name: "schemas", argv: ["node", "--import", "tsx", "scripts/gen-schemas.ts", "--check"] },
  { name: "worker", argv: ["npm", "run", "-s", "check:worker"] },
];

/** The lines of a failed check's (or a crashed suite's) output shown: the end, where errors are. */
const LAST_LINES = 6;

/** A heartbeat line while suites run, so a long run shows it is alive. */
const HEARTBEAT_MS = 60_000;

/**
 * The bound of one test file under node:test (`--test-timeout`, which Node applies to each file's
 * run as well as to each test in it): the API contract, among the slowest, takes 1 to 3 minutes;
 * one past this is stuck, and fails by name instead of holding the suite.
 */
const NODE_FILE_MS = 600_000;

/**
 * The bound of one top-level test under Deno, read from its "has been running for over" lines
 * (Deno's node:test honours an `it`'s timeout, not a `describe`'s or a hook's): the API contract's
 * takes about 3 minutes with the load at 10 on 2 cores. One past this stops its process, and is a
 * failure by name.
 */
const DENO_STUCK_MS = 480_000;

type SuiteName = "node" | "deno" | "workerd";

type SuiteResult = {
  name: SuiteName;
  passed: number;
  failed: number;
  skipped: number;
  seconds: number;
  exitCode: number | null;
};

/** Something a suite needs that this machine may not have, and the test files that need it. */
export type Need = {
  what: string;
  files: (path: string) => boolean;
  found: string | null;
  missing: string | null;
};

const seconds = (since: number) => (performance.now() - since) / 1_000;

function duration(s: number): string {
  const m = Math.floor(s / 60);
  return m > 0 ? `${m}m${String(Math.round(s - m * 60)).padStart(2, "0")}s` : `${s.toFixed(1)}s`;
}

/** The commands running now: stopped with the runner, so none outlives an interrupted npm test. */
const running = new Set<ReturnType<typeof spawn>>();

function stopWithRunner(): void {
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      for (const child of running) child.kill("SIGTERM");
      console.log(`npm test: stopped by ${signal}`);
      process.exit(130);
    });
  }
}

/** Runs a command with its output in `log`; resolves with its exit code. */
function run(
  argv: string[],
  options: {
    env?: Record<string, string>;
    log: WriteStream;
    onLine?: (line: string, stream: "stdout" | "stderr") => void;
    /** Said of a line when the command must be stopped: why, written to the log. */
    stopAt?: (line: string) => string | null;
  },
): Promise<number | null> {
  const [command, ...args] = argv as [string, ...string[]];
  const child = spawn(command, args, {
    cwd: ROOT,
    // Plain text in the logs: Deno and the checks colour their output otherwise.
    env: { ...process.env, NO_COLOR: "1", ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  child.once("close", () => running.delete(child));
  for (const stream of [child.stdout, child.stderr]) {
    stream.on("data", (chunk: Buffer) => options.log.write(chunk));
  }
  if (options.onLine || options.stopAt) {
    const { onLine, stopAt } = options;
    const each = (line: string, stream: "stdout" | "stderr") => {
      onLine?.(line, stream);
      const why = stopAt?.(line) ?? null;
      if (why === null) return;
      options.log.write(`\nnpm test: stopped: ${why}\n`);
      child.kill("SIGTERM");
    };
    createInterface({ input: child.stdout, crlfDelay: Infinity })
      .on("line", (line) => each(line, "stdout"));
    createInterface({ input: child.stderr, crlfDelay: Infinity })
      .on("line", (line) => each(line, "stderr"));
  }
  return new Promise((resolve) => {
    child.once("error", (error) => {
      options.log.write(`\n${command}: ${error.message}\n`);
      resolve(127);
    });
    child.once("close", (code) => resolve(code));
  });
}

function openLog(name: string): WriteStream {
  return createWriteStream(join(RESULTS, name));
}

function closeLog(log: WriteStream): Promise<void> {
  return new Promise((resolve) => log.end(resolve));
}

async function runChecks(): Promise<{ passed: number; failed: number }> {
  const log = openLog("checks.log");
  let passed = 0;
  let failed = 0;
  for (const check of CHECKS) {
    const started = performance.now();
    log.write(`\n$ ${check.argv.join(" ")}\n`);
    let last: string[] = [];
    const code = await run(check.argv, {
      log,
      onLine: (line) => {
        if (line.trim() !== "") last = [...last.slice(-(LAST_LINES - 1)), line];
      },
    });
    const took = duration(seconds(started));
    if (code === 0) {
      passed++;
      console.log(`check ${check.name}: ok (${took})`);
    } else {
      failed++;
      console.log(`check ${check.name}: FAILED, exit ${code} (${took}; test-results/checks.log):`);
      for (const line of last) console.log(`    ${line}`);
    }
  }
  await closeLog(log);
  return { passed, failed };
}

/** Test files under `dir` (relative to the root), `*.test.ts`, sorted, skipping `exclude`d folders. */
async function testFiles(
  dir: string,
  recursive: boolean,
  exclude: string[] = [],
): Promise<string[]> {
  const entries = await readdir(join(ROOT, dir), { recursive, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith(".test.ts"))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)).split("\\").join("/"))
    .filter((path) => !exclude.some((folder) => path.startsWith(folder)))
    .sort();
}

/** The folders Deno's `test.exclude` in deno.json leaves out. */
async function denoExcludes(): Promise<string[]> {
  const config = JSON.parse(await readFile(join(ROOT, "deno.json"), "utf8")) as {
    test?: { exclude?: string[] };
  };
  return (config.test?.exclude ?? []).map((p) => (p.endsWith("/") ? p : `${p}/`));
}

function onPath(command: string, env: Record<string, string | undefined>): string | null {
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    const path = join(dir, command);
    if (dir !== "" && existsSync(path)) return path;
  }
  return null;
}

/**
 * What some suites need, and whether this machine has it: `found` says what will be used, or
 * `missing` why not. The browser is unpacked here, once, before any suite starts.
 */
export async function needs(
  env: Record<string, string | undefined> = process.env,
): Promise<Need[]> {
  const chromium = await testChromium(env);
  let browser: Pick<Need, "found" | "missing">;
  if (!chromium.ok) browser = { found: null, missing: chromium.reason };
  else {
    const version = chromiumVersion(chromium.chromium);
    browser = version === null
      ? { found: null, missing: `${chromium.chromium.described} does not start (--version failed)` }
      : { found: `${version}, ${chromium.chromium.described}`, missing: null };
  }
  const redisServer = onPath("redis-server", env);
  const prometheus = onPath("prometheus", env);
  return [
    { what: "browser", files: (path) => /^tests\/browser-[^/]*\.test\.ts$/.test(path), ...browser },
    {
      what: "redis",
      files: (path) => /redis/i.test(path.split("/").at(-1) ?? ""),
      found: redisServer,
      // Required (as .ci/run requires it), the suites run and fail, saying what is missing.
      missing: redisServer === null && env.TRACEFETCH_REQUIRE_REDIS !== "1"
        ? "redis-server is not installed (Debian: apt-get install redis-server; .ci/run installs it)"
        : null,
    },
    {
      what: "prometheus",
      files: (path) => /prometheus/i.test(path.split("/").at(-1) ?? ""),
      found: prometheus,
      missing: prometheus === null && env.TRACEFETCH_REQUIRE_PROMETHEUS !== "1"
        ? "prometheus is not installed (Debian: apt-get install prometheus; .ci/run installs it)"
        : null,
    },
  ];
}

/** A suite to run: `tap` is read as it arrives; `junit` names the report Deno writes at the end. */
type Plan = {
  name: SuiteName;
  /** How its lines are prefixed: the suite, or the suite and its shard (`deno 1/2`). */
  label: string;
  argv: string[];
  env: Record<string, string>;
  report: { kind: "tap" } | { kind: "junit"; file: string };
  log: string;
};

async function plans(leftOut: (path: string) => boolean): Promise<Plan[]> {
  const node = (await testFiles("tests", false)).filter((f) => !leftOut(f));
  const deno = (await testFiles("tests", true, await denoExcludes()))
    .filter((f) => !leftOut(f) && !CHILD_PROCESSES_ONLY.includes(f));
  const workerd = (await testFiles("tests/workerd", false)).filter((f) => !leftOut(f));
  const nodeTest = (concurrency: number, files: string[]) => [
    "node",
    "--import",
    "tsx",
    "--test",
    `--test-concurrency=${concurrency}`,
    `--test-timeout=${NODE_FILE_MS}`,
    "--test-reporter=tap",
    ...files,
  ];
  return [
    {
      name: "node",
      label: "node",
      argv: nodeTest(2, node),
      env: {},
      report: { kind: "tap" },
      log: "node.tap",
    },
    ...shards(deno, DENO_SHARDS).map((files, i): Plan => {
      const label = `deno ${i + 1}/${DENO_SHARDS}`;
      const junit = join(RESULTS, `deno-${i + 1}.junit.xml`);
      return {
        name: "deno",
        label,
        argv: [join(BIN, "deno"), "test", "--allow-all", `--junit-path=${junit}`, ...files],
        env: {},
        report: { kind: "junit", file: junit },
        log: `deno-${i + 1}.log`,
      };
    }),
    {
      name: "workerd",
      label: "workerd",
      argv: nodeTest(1, workerd),
      env: OFFLINE_WRANGLER,
      report: { kind: "tap" },
      log: "workerd.tap",
    },
  ];
}

/**
 * Test files whose cases drive child processes only (the Node CLI `bin/tracefetch.js`, and the
 * Node and Deno entries), which are the same whichever runtime runs the test file: the Node suite
 * runs them, and the Deno suite would run the same processes again (about two minutes of its
 * time). Said in one line at each run; `npm run test:deno` still runs them. cli-newcomer.test.ts
 * stays in both: one of its cases runs `connect` in process, as `deno task cli` would.
 */
export const CHILD_PROCESSES_ONLY = [
  "tests/cli.test.ts",
  "tests/cli-commands.test.ts",
  "tests/cli-connect.test.ts",
  "tests/cli-expand-doctor.test.ts",
  "tests/cli-stdin.test.ts",
  "tests/mining-connect.test.ts",
  "tests/newcomer-start.test.ts",
  "tests/state-redis-gateways.test.ts",
];

/**
 * Deno runs one test file at a time and waits most of the time (its suite took 5m49s alone for
 * 3m30s of CPU), so its files are split between two processes, each file in one of them. Not
 * `deno test --parallel`: its workers share one process's environment, which some tests set.
 */
const DENO_SHARDS = 2;

/** `files` dealt in turn into `n` lists, so neighbours (cli-*.test.ts) fall apart. */
function shards(files: string[], n: number): string[][] {
  const lists: string[][] = Array.from({ length: n }, () => []);
  files.forEach((file, i) => lists[i % n]?.push(file));
  return lists.filter((list) => list.length > 0);
}

/** A line of a test's own output worth showing: a fuzz suite's run count. */
function isRunCount(line: string): boolean {
  return /\bruns in \d+(\.\d+)? s\b/.test(line);
}

function printFailure(suite: string, failure: TapFailure): void {
  console.log(`${suite}: not ok: ${failure.name}`);
  for (const line of failure.detail) console.log(`    ${line}`);
}

async function runSuite(
  plan: Plan,
  live: Map<string, TapCounts | null>,
): Promise<SuiteResult> {
  const started = performance.now();
  const log = openLog(plan.log);
  const tally = new TapTally((failure) => printFailure(plan.label, failure));
  live.set(plan.label, plan.report.kind === "tap" ? tally.counts : null);
  if (plan.report.kind === "junit") await rm(plan.report.file, { force: true });
  let lastLines: string[] = [];
  let stuck: string | null = null;
  const exitCode = await run(plan.argv, {
    env: plan.env,
    log,
    stopAt: (line) => {
      if (plan.name !== "deno" || stuck !== null) return null;
      stuck = denoStuckTest(line, DENO_STUCK_MS);
      return stuck === null ? null : `'${stuck}' ran past ${duration(DENO_STUCK_MS / 1_000)}`;
    },
    onLine: (line, stream) => {
      if (plan.report.kind === "tap" && stream === "stdout") tally.line(line);
      if (line.trim() !== "") lastLines = [...lastLines.slice(-(LAST_LINES - 1)), line];
      // node:test prints a test's output as a TAP comment, Deno as it is.
      if (isRunCount(line)) console.log(`${plan.label}: ${line.replace(/^\s*#\s?/, "").trim()}`);
    },
  });
  tally.end();
  await closeLog(log);
  let counts: TapCounts = tally.counts;
  if (plan.report.kind === "junit") {
    const xml = await readFile(plan.report.file, "utf8").catch(() => "");
    const read = junitTally(xml);
    counts = read.counts;
    for (const failure of read.failures) printFailure(plan.label, failure);
  }
  const result: SuiteResult = { name: plan.name, ...counts, seconds: seconds(started), exitCode };
  live.delete(plan.label);
  if (stuck !== null) {
    // Its process was stopped: the files after it in this shard did not run.
    result.failed++;
    console.log(
      `${plan.label}: not ok: ${stuck}: still running after ${
        duration(DENO_STUCK_MS / 1_000)
      }, so its process was stopped and the rest of its files did not run (test-results/${plan.log})`,
    );
  }
  if (exitCode !== 0 && result.failed === 0) {
    // The runner failed without a failing test to show (a type error, a crash): never silent.
    result.failed = 1;
    console.log(
      `${plan.label}: not ok: it exited ${exitCode} with no failing test in its report (test-results/${plan.log}); its last lines:`,
    );
    for (const line of lastLines) console.log(`    ${line}`);
  }
  console.log(
    `${plan.label}: ${result.passed} passed, ${result.failed} failed, ${result.skipped} skipped ` +
      `in ${duration(result.seconds)} (test-results/${plan.log})`,
  );
  return result;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const only = args.filter((a) => !a.startsWith("--")) as SuiteName[];
  const started = performance.now();
  stopWithRunner();
  await mkdir(RESULTS, { recursive: true });
  console.log(
    "npm test: checks, then the Node, Deno and workerd suites at once; whole output in test-results/",
  );
  const checks = args.includes("--no-checks") ? { passed: 0, failed: 0 } : await runChecks();
  const lacking = await needs();
  const notRun: string[] = [];
  for (const need of lacking) {
    if (need.found !== null) console.log(`${need.what}: ${need.found}`);
    if (need.missing === null) continue;
    const files = [
      ...await testFiles("tests", true, ["tests/fixtures/", "tests/support/"]),
    ].filter(need.files);
    if (files.length === 0) continue;
    notRun.push(need.what);
    console.log(
      `${need.what} tests: cannot run, left out: ${need.missing} (${files.join(", ")})`,
    );
  }
  const leftOut = (path: string) => lacking.some((n) => n.missing !== null && n.files(path));
  if (only.length === 0 || only.includes("deno")) {
    console.log(
      `deno: ${CHILD_PROCESSES_ONLY.length} files run on Node only, as they drive child processes that are the same under either runtime (${
        CHILD_PROCESSES_ONLY.map((f) => f.replace(/^tests\//, "")).join(", ")
      })`,
    );
  }
  const chosen = (await plans(leftOut)).filter((p) => only.length === 0 || only.includes(p.name));
  const live = new Map<string, TapCounts | null>();
  const heartbeat = setInterval(() => {
    const parts = [...live].map(([name, counts]) =>
      counts === null
        ? `${name} running`
        : `${name} ${counts.passed} passed, ${counts.failed} failed`
    );
    console.log(`... ${duration(seconds(started))}: ${parts.join("; ")}`);
  }, HEARTBEAT_MS);
  const results = await Promise.all(chosen.map((plan) => runSuite(plan, live)));
  clearInterval(heartbeat);
  const sum = (pick: (r: SuiteResult) => number, of = results) =>
    of.reduce((n, r) => n + pick(r), 0);
  const failed = sum((r) => r.failed);
  const names = [...new Set(results.map((r) => r.name))];
  const per = names.map((name) => {
    const of = results.filter((r) => r.name === name);
    return `${name} ${sum((r) => r.passed, of)}/${sum((r) => r.failed, of)}`;
  }).join(", ");
  const checkText = checks.passed + checks.failed === 0
    ? "checks not run"
    : `checks ${checks.passed} of ${checks.passed + checks.failed} ok`;
  console.log(
    `${sum((r) => r.passed)} passed, ${failed} failed (${per}; ${sum((r) => r.skipped)} skipped; ` +
      `${checkText}${notRun.length > 0 ? `; not run: ${notRun.join(", ")}` : ""}) ` +
      `in ${duration(seconds(started))}`,
  );
  process.exit(failed > 0 || checks.failed > 0 ? 1 : 0);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
