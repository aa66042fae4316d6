/**
 * `npm run bench`: starts the provider servers, then for each scenario the gateway under test, the
 * naive baseline and the ceiling, each in its own child process on 127.0.0.1; measures; prints one
 * table with the targets; and stops everything. `npm run bench -- --profile` prints CPU profiles
 * instead (`--profile --only 9`: scenario 9's two gateways); `--only 1,4` runs only those scenarios; `--compare DIR` adds the Node gateway of another
 * checkout (an older commit) to scenario 4, measured beside this one; `--extraction-data DIR` adds
 * the article extraction benchmark's pages to scenario 8's extraction rows. A watchdog ends the run (and
 * every child) if it ever takes longer than 5 minutes.
 */
import { availableParallelism, cpus, loadavg, totalmem } from "node:os";
import { installCleanup, killAllAndWait } from "./children.ts";
import { memory } from "./scenario-memory.ts";
import { firstEvent, overhead, unloaded } from "./scenario-latency.ts";
import { sharedState } from "./scenario-shared-state.ts";
import { answerCache } from "./scenario-answer-cache.ts";
import { profileTelemetry, telemetryOverhead } from "./scenario-telemetry.ts";
import { throughput } from "./scenario-throughput.ts";
import { fetchScenario } from "./scenario-fetch.ts";
import { profileRun } from "./profile.ts";
import { notes, type Row, table } from "./report.ts";
import { startProviders } from "./targets.ts";

/**
 * About 2.5 minutes on the 2-core machine of docs/benchmarks.md, of which scenario 4 (seven
 * targets over three runtimes, workerd's bundle built first, then two profiles) is a minute:
 * twice that, so a busy machine still finishes while a hung run is still stopped.
 */
const WATCHDOG_MS = 300_000;

/** The value after a flag (`--compare DIR`), or undefined. */
function option(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at < 0 ? undefined : process.argv[at + 1];
}

function machine(): string {
  const gib = (totalmem() / 1024 ** 3).toFixed(1);
  return `node ${process.version}, ${availableParallelism()} CPUs (${
    cpus()[0]?.model.trim() ?? "unknown CPU"
  }), ${gib} GiB RAM, ${process.platform}; load average before the run ${
    loadavg().map((l) => l.toFixed(2)).join(" ")
  }`;
}

async function main(): Promise<void> {
  installCleanup();
  const watchdog = setTimeout(() => {
    console.error(`bench: still running after ${WATCHDOG_MS / 1000} s; stopping`);
    void killAllAndWait().finally(() => process.exit(1));
  }, WATCHDOG_MS);
  const started = performance.now();
  const header = machine();
  const providers = await startProviders();
  const { urls } = providers.info;
  const step = (name: string) =>
    console.error(`bench: ${name} (${((performance.now() - started) / 1000).toFixed(0)} s)`);

  if (process.argv.includes("--profile") && option("--only") === "9") {
    step("profiling the gateway with metrics and traces on and off");
    console.log(await profileTelemetry(urls));
  } else if (process.argv.includes("--profile")) {
    step("profiling the gateway");
    console.log(await profileRun(urls));
  } else {
    const only = option("--only")?.split(",");
    const runs = (n: string) => only === undefined || only.includes(n);
    const compare = option("--compare");
    const rows: Row[] = [];
    let memNote = "(not run)";
    let details = "";
    if (runs("1")) {
      step("1 overhead");
      rows.push(...await overhead(urls, compare));
    }
    if (runs("2")) {
      step("2 first event");
      rows.push(...await firstEvent(urls));
    }
    if (runs("3")) {
      step("3 memory");
      const mem = await memory(urls, providers);
      rows.push(...mem.rows);
      memNote = mem.note;
    }
    if (runs("4")) {
      step("4 throughput and CPU per search");
      const load = await throughput(urls, compare);
      rows.push(...load.rows);
      details = load.details;
    }
    if (runs("5")) {
      step("5 unloaded latency");
      rows.push(...await unloaded(urls));
    }
    if (runs("6")) {
      step("6 shared state over Redis");
      rows.push(...await sharedState(urls));
    }
    if (runs("7")) {
      step("7 answer cache over Redis");
      rows.push(...await answerCache(urls));
    }
    if (runs("8")) {
      step("8 fetching a page");
      rows.push(...await fetchScenario(urls, option("--extraction-data")));
    }
    if (runs("9")) {
      step("9 metrics and traces on and off");
      rows.push(...await telemetryOverhead(urls));
    }
    console.log(`TraceFetch Edge benchmark: ${header}\n`);
    console.log(table(rows));
    if (details !== "") console.log(`\n${details}`);
    console.log(`\n${
      notes([
        "each target warmed to its steady state (1,000 searches, 16 at a time, or 10 s), then " +
        "200 sequential searches (limit=20) after 20 warm-up rounds, each target's p50 (p99) " +
        "minus the p50 (p99) of the client's own 8 concurrent calls to the same providers, " +
        "gateway, naive, the relay and those calls taking turns. The relay makes the same 8 " +
        "calls with undici and answers their bodies unparsed in one array: one more process " +
        "and HTTP exchange, no work.",
        'time to the first NDJSON line starting {"event":"provider", minus 10 ms, over 100 ' +
        "sequential streamed searches after [1]'s warm-up; 'direct' is the 10 ms provider " +
        "called without a gateway.",
        memNote,
        "closed loop, 16 keep-alive connections; each target warmed (1,000 searches or 3 s), then five 1 s windows " +
        "each, targets taking turns; the ceiling is a bare Hono route making one fetch. CPU per " +
        "search: the target process's user + system CPU (/proc) over its windows divided by the " +
        "searches it served in them; for workerd, workerd's own process.",
        "each target warmed as in [1], then 300 sequential searches after 50 warm-up rounds, " +
        "gateway, naive and the single-fetch ceiling (over one of the same providers) taking " +
        "turns.",
        "gateways started as `npm start` starts them, one with no store and one with Redis " +
        "(redis-server on 127.0.0.1), 500 sequential searches each after 50 warm-up rounds, " +
        "taking turns; Redis minus no store. Then 200 trials on gateways A and B over that " +
        "Redis, each on a provider of its own: B searches it while it answers (so B mirrors it " +
        "as healthy), it starts failing (503), A's 5 searches and the gateway's probe suspend it; " +
        "from the probe's 503, B searches it back to back until one skips it. Keys: every key " +
        "the gateways left, read once they stopped; a breaker's TTL is an hour past its " +
        "suspension, so the row checks each TTL against its bound instead of waiting for it. " +
        "Store 200 ms late: a gateway over that Redis behind a TCP proxy holding each chunk it " +
        "sends 200 ms (TRACEFETCH_STATE_TIMEOUT_MS 1000, caller_limits, cache_ttl_seconds), " +
        "100 sequential searches with timeout_ms 300 after 10 warm-up ones; round trips in " +
        "sequence: the proxy's chunks during a search, 100 ms or more apart; commands: INFO " +
        "commandstats before and after, divided by the searches.",
        "gateways A and B started as `npm start` starts them over one Redis, every provider " +
        "with cache_ttl_seconds; A runs [6]'s search (4 zero-delay providers) and [1]'s (8 at " +
        "50 ms) once, then B repeats them in two passes of 500 rounds after 50 warm-up rounds: " +
        "the two cached searches taking turns (the p50 and p99 rows), then each taking turns " +
        "with itself sent with max_age_seconds=0 (every provider asked; the reference and the " +
        "'between asked ones' rows).",
        "a 100 KB article on 127.0.0.1 and a gateway whose manifest opens that address: the " +
        "cached fetch and a cached search (one zero-delay provider with cache_ttl_seconds) " +
        "taking turns over HTTP, 300 each after 30 warm-up rounds, against a gateway started " +
        "as `npm start` starts it; then 100 uncached fetches (max_age_seconds=0) through a " +
        "gateway built in this process, each one's CPU (process.cpuUsage; the page is served " +
        "by a child process, not counted) beside extractPage alone on the same page.",
        "two gateways started as `npm start` starts them over [6]'s providers: one with metrics " +
        "kept and traces exported (http/protobuf, the default) to an OTLP/HTTP receiver on " +
        "127.0.0.1, one with TRACEFETCH_METRICS=off and no endpoint; 500 sequential searches each " +
        "after 1,000 warm-up rounds (to their steady state), taking turns. CPU per search: each " +
        "gateway process's user + system CPU (/proc) over those 500 searches, read after the " +
        "warm-up and a 2 s pause, exports and garbage collection included.",
      ])
    }`);
    const misses = rows.filter((r) => r.result === "MISS").length;
    const passes = rows.filter((r) => r.result === "PASS").length;
    console.log(
      `\n${passes} PASS, ${misses} MISS; run took ${
        ((performance.now() - started) / 1000).toFixed(0)
      } s; load average after the run ${loadavg().map((l) => l.toFixed(2)).join(" ")}`,
    );
  }
  await providers.stop();
  clearTimeout(watchdog);
  await killAllAndWait();
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error("bench: failed:", error);
    void killAllAndWait().finally(() => process.exit(1));
  },
);
