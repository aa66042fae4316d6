/**
 * (4) Searches per second and CPU per search at concurrency 16 over 4 zero-delay providers of 20
 * candidates each: the gateway on Node (default and `view=merged`), on Deno and in workerd (through
 * Miniflare), the naive baseline, the ceiling (one fetch to one provider), and with `--compare DIR`
 * the Node gateway of another checkout. Closed loop, every request a distinct query; each target
 * is warmed (1,000 searches or 3 s), then the targets take turns in 1 s windows (five each, order
 * rotated every round) so background load on the machine falls on all of them alike. CPU per search is the
 * target process's CPU (user + system, from /proc) over its windows, divided by the searches it
 * served in them. Then a CPU profile of the Node gateway (and of the compared one) splits that
 * CPU into the stages of a search.
 */
import type { Child } from "./children.ts";
import { cpuMs, totalCpuMs } from "./cpu.ts";
import { closedLoop, keepAliveAgent, type LoadResult } from "./http-client.ts";
import { type Row, verdict } from "./report.ts";
import { ms, p50, p99 } from "./stats.ts";
import { type Breakdown, breakdownTable, profiledBreakdown } from "./stages.ts";
import {
  distinctSearches,
  GROUPS,
  type Kind,
  type Port,
  searchUrl,
  startCeiling,
  startDenoGateway,
  startGateway,
  startNaive,
  startWorkerdGateway,
  type Urls,
  verify,
  WIDE_CANDIDATES,
} from "./targets.ts";

export const CONCURRENCY = 16;
/**
 * Warm-up per target, whichever ends first: CPU per search still falls over a Node gateway's first
 * thousand searches while V8 optimises, and a target that slow must not hold the run up.
 */
const WARM_SEARCHES = 1_000;
const WARM_MAX_MS = 3_000;
const WINDOW_MS = 1_000;
const ROUNDS = 5;
/** The profiled window of the stage breakdown: long enough for a few thousand samples. */
const PROFILE_MS = 3_000;
/** The issue's bars: throughput against the naive fan-out, and a workerd search's CPU. */
const THROUGHPUT_RATIO_TARGET = 1.5;
const WORKERD_CPU_TARGET_MS = 2;

type Target = {
  kind: Kind;
  child: Child<Port>;
  params: Record<string, string>;
  providers: number;
  /** The processes whose CPU is this target's (workerd's own process, not Miniflare's Node). */
  pids: number[];
};

type Measured = LoadResult & { cpuMs: number; cpuPerSearch: number };

async function loadAll(targets: Target[]): Promise<Measured[]> {
  const agents = targets.map(() => keepAliveAgent(CONCURRENCY));
  const specs = targets.map((t) => ({ url: distinctSearches(t.child, t.params) }));
  const totals = targets.map((): Measured => ({
    rps: 0,
    completed: 0,
    sent: 0,
    errors: 0,
    latencies: [],
    cpuMs: 0,
    cpuPerSearch: 0,
  }));
  try {
    for (const t of targets) await verify(t.kind, searchUrl(t.child, t.params), t.providers);
    for (const [i, spec] of specs.entries()) {
      const until = performance.now() + WARM_MAX_MS;
      let warmed = 0;
      while (warmed < WARM_SEARCHES && performance.now() < until) {
        warmed += (await closedLoop(spec, CONCURRENCY, 0, 250, agents[i])).sent;
      }
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (let k = 0; k < targets.length; k++) {
        const i = (k + round) % targets.length;
        const before = totalCpuMs(targets[i]!.pids);
        const window = await closedLoop(specs[i]!, CONCURRENCY, 0, WINDOW_MS, agents[i]);
        const total = totals[i]!;
        total.cpuMs += totalCpuMs(targets[i]!.pids) - before;
        total.completed += window.completed;
        total.sent += window.sent;
        total.errors += window.errors;
        total.latencies.push(...window.latencies);
      }
    }
  } finally {
    for (const agent of agents) agent.destroy();
  }
  for (const total of totals) {
    total.rps = total.completed / (ROUNDS * WINDOW_MS / 1000);
    total.cpuPerSearch = total.cpuMs / total.sent;
  }
  return totals;
}

const rate = (r: LoadResult) =>
  `${Math.round(r.rps)}/s${r.errors > 0 ? ` (${r.errors} errors)` : ""}`;
const lat = (r: LoadResult) => `${ms(p50(r.latencies))} / ${ms(p99(r.latencies))}`;
const cpu = (r: Measured) => ms(r.cpuPerSearch);

export type ThroughputReport = { rows: Row[]; details: string };

export async function throughput(urls: Urls, compare?: string): Promise<ThroughputReport> {
  const names = GROUPS.wide4;
  const params = { q: "deadline", limit: String(WIDE_CANDIDATES) };
  const [gateway, merged, deno, workerd, naive, ceiling, compared] = await Promise.all([
    startGateway(urls, names),
    startGateway(urls, names),
    startDenoGateway(urls, names),
    startWorkerdGateway(urls, names),
    startNaive(urls, names),
    startCeiling(urls, "wide0"),
    compare === undefined ? null : startGateway(urls, names, [], compare),
  ]);
  const children = [gateway, merged, deno, workerd, naive, ceiling, compared].filter((c) =>
    c !== null
  );
  const own = (child: Child<Port>) => [child.pid];
  let results: Measured[];
  let breakdowns: Breakdown[];
  try {
    const targets: Target[] = [
      { kind: "gateway", child: gateway, params, providers: 4, pids: own(gateway) },
      {
        kind: "gateway",
        child: merged,
        params: { ...params, view: "merged" },
        providers: 4,
        pids: own(merged),
      },
      { kind: "gateway", child: deno, params, providers: 4, pids: own(deno) },
      { kind: "gateway", child: workerd, params, providers: 4, pids: [workerd.info.workerd] },
      { kind: "naive", child: naive, params, providers: 4, pids: own(naive) },
      { kind: "ceiling", child: ceiling, params, providers: 1, pids: own(ceiling) },
    ];
    if (compared !== null) {
      targets.push({ kind: "gateway", child: compared, params, providers: 4, pids: own(compared) });
    }
    const miniflareBefore = cpuMs(workerd.pid);
    results = await loadAll(targets);
    const miniflareMs = cpuMs(workerd.pid) - miniflareBefore;
    const profile = (child: Child<Port>) =>
      profiledBreakdown(child, { url: distinctSearches(child, params) }, CONCURRENCY, PROFILE_MS);
    breakdowns = [await profile(gateway)];
    if (compared !== null) breakdowns.unshift(await profile(compared));
    const isolateMs = await isolateCpu(workerd, params);
    return report(results, breakdowns, miniflareMs, isolateMs, compare);
  } finally {
    await workerd.request("dispose").catch(() => {});
    await Promise.all(children.map((c) => c.stop()));
  }
}

/**
 * The worker isolate's own time per search in workerd, from a V8 profile through its inspector:
 * what Workers bill as CPU, without workerd's HTTP handling or Miniflare's workers in front.
 */
async function isolateCpu(workerd: Child<Port>, params: Record<string, string>): Promise<number> {
  await workerd.request("profile-start");
  const load = await closedLoop(
    { url: distinctSearches(workerd, params) },
    CONCURRENCY,
    0,
    PROFILE_MS,
  );
  const { busyMs } = (await workerd.request("profile-stop")) as { busyMs: number };
  return busyMs / load.sent;
}

function report(
  results: Measured[],
  breakdowns: Breakdown[],
  miniflareMs: number,
  isolateMs: number,
  compare: string | undefined,
): ThroughputReport {
  const [gateway, merged, deno, workerd, naive, ceiling, compared] = results as [
    Measured,
    Measured,
    Measured,
    Measured,
    Measured,
    Measured,
    Measured | undefined,
  ];
  const ratio = gateway.rps / naive.rps;
  const rows: Row[] = [
    {
      measurement: `4 searches/s, concurrency ${CONCURRENCY}, 4 zero-delay providers x 20 [4]`,
      gateway: rate(gateway),
      naive: rate(naive),
      reference: `ceiling ${rate(ceiling)}`,
      target: `>= ${THROUGHPUT_RATIO_TARGET}x naive`,
      result: verdict(ratio >= THROUGHPUT_RATIO_TARGET && gateway.errors === 0),
    },
    {
      measurement: "4 gateway / naive",
      gateway: `${ratio.toFixed(2)}x`,
      naive: "1.00x",
      reference: `ceiling ${(ceiling.rps / naive.rps).toFixed(2)}x`,
      target: `>= ${THROUGHPUT_RATIO_TARGET.toFixed(2)}x`,
      result: verdict(ratio >= THROUGHPUT_RATIO_TARGET),
    },
    {
      measurement: "4 latency p50 / p99 under that load",
      gateway: lat(gateway),
      naive: lat(naive),
      reference: `ceiling ${lat(ceiling)}`,
      target: "(info)",
      result: "",
    },
    {
      measurement: "4 searches/s, gateway with view=merged",
      gateway: `${rate(merged)} (${(merged.rps / naive.rps).toFixed(2)}x)`,
      naive: rate(naive),
      reference: "",
      target: "(info)",
      result: "",
    },
    {
      measurement: "4 CPU per search, Node [4]",
      gateway: cpu(gateway),
      naive: cpu(naive),
      reference: `ceiling ${cpu(ceiling)}`,
      target: compared === undefined ? "(info)" : "<= 1/2 compared",
      result: compared === undefined
        ? ""
        : verdict(gateway.cpuPerSearch <= compared.cpuPerSearch / 2),
    },
    {
      measurement: "4 CPU per search, Node, view=merged",
      gateway: cpu(merged),
      naive: cpu(naive),
      reference: "",
      target: "(info)",
      result: "",
    },
    {
      measurement: "4 Deno: CPU per search; searches/s; p50 / p99",
      gateway: `${cpu(deno)}; ${rate(deno)}; ${lat(deno)}`,
      naive: cpu(naive),
      reference: `Node ${cpu(gateway)}`,
      target: "(info)",
      result: "",
    },
    {
      measurement: "4 workerd: CPU per search; searches/s; p50 / p99",
      gateway: `${cpu(workerd)}; ${rate(workerd)}; ${lat(workerd)}`,
      naive: cpu(naive),
      reference: `Miniflare's Node ${ms(miniflareMs / workerd.sent)}`,
      target: `< ${WORKERD_CPU_TARGET_MS} ms`,
      result: verdict(workerd.cpuPerSearch < WORKERD_CPU_TARGET_MS),
    },
    {
      measurement: "4 workerd: the worker isolate's time per search (profiled)",
      gateway: ms(isolateMs),
      naive: "",
      reference: "process CPU above",
      target: `< ${WORKERD_CPU_TARGET_MS} ms`,
      result: verdict(isolateMs < WORKERD_CPU_TARGET_MS),
    },
  ];
  if (compared !== undefined) {
    rows.push({
      measurement: "4 compared tree: CPU per search; searches/s; p50 / p99",
      gateway: `${cpu(compared)}; ${rate(compared)}; ${lat(compared)}`,
      naive: cpu(naive),
      reference: `this tree ${(gateway.cpuPerSearch / compared.cpuPerSearch).toFixed(2)}x`,
      target: "(info)",
      result: "",
    });
  }
  const labels = compare === undefined ? ["this tree"] : [`compared (${compare})`, "this tree"];
  return { rows, details: breakdownTable(breakdowns, labels) };
}
