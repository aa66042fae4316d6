/**
 * `npm run bench`: starts the provider servers, then for each scenario the gateway under test, the
 * naive baseline and the ceiling, each in its own child process on 127.0.0.1; measures; prints one
 * table with the targets; and stops everything. `npm run bench -- --profile` prints CPU profiles
 * instead. A watchdog ends the run (and every child) if it ever takes longer than 3 minutes.
 */
import { availableParallelism, cpus, loadavg, totalmem } from "node:os";
import { installCleanup, killAllAndWait } from "./children.ts";
import { memory } from "./scenario-memory.ts";
import { firstEvent, overhead, unloaded } from "./scenario-latency.ts";
import { throughput } from "./scenario-throughput.ts";
import { profileRun } from "./profile.ts";
import { notes, type Row, table } from "./report.ts";
import { startProviders } from "./targets.ts";

const WATCHDOG_MS = 180_000;

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

  if (process.argv.includes("--profile")) {
    step("profiling the gateway");
    console.log(await profileRun(urls));
  } else {
    const rows: Row[] = [];
    step("1 overhead");
    rows.push(...await overhead(urls));
    step("2 first event");
    rows.push(...await firstEvent(urls));
    step("3 memory");
    const mem = await memory(urls, providers);
    rows.push(...mem.rows);
    step("4 throughput");
    rows.push(...await throughput(urls));
    step("5 unloaded latency");
    rows.push(...await unloaded(urls));
    console.log(`TraceFetch Edge benchmark: ${header}\n`);
    console.log(table(rows));
    console.log(`\n${
      notes([
        "latency minus 50 ms over 200 sequential searches (limit=50) after 20 warm-up rounds, " +
        "gateway, naive and a direct call taking turns; 'direct' is one provider called " +
        "without any gateway: the floor of timer slack and one HTTP exchange.",
        'time to the first NDJSON line starting {"event":"provider", minus 10 ms, over 100 ' +
        "sequential streamed searches; 'direct' is the 10 ms provider called without a gateway.",
        mem.note,
        "closed loop, 16 keep-alive connections; 1 s warm-up per target, then five 1 s windows " +
        "each, targets taking turns; the ceiling is a bare Hono route making one fetch.",
        "300 sequential searches after 50 warm-up rounds, gateway, naive and the single-fetch " +
        "ceiling (over one of the same providers) taking turns.",
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
