/**
 * (4) Searches per second at concurrency 16 over 4 zero-delay providers: the gateway (default and
 * `view=merged`), the naive baseline, and the ceiling (one fetch to one provider). Closed loop;
 * each target gets 1 s of warm-up, then the targets take turns in 1 s windows (five each, order
 * rotated every round) so background load on the machine falls on all of them alike.
 */
import type { Child } from "./children.ts";
import { closedLoop, keepAliveAgent, type LoadResult } from "./http-client.ts";
import { type Row, verdict } from "./report.ts";
import { ms, p50, p99 } from "./stats.ts";
import {
  GROUPS,
  type Kind,
  type Port,
  searchUrl,
  startCeiling,
  startGateway,
  startNaive,
  type Urls,
  verify,
} from "./targets.ts";

export const CONCURRENCY = 16;
const WARM_MS = 1_000;
const WINDOW_MS = 1_000;
const ROUNDS = 5;

type Target = { kind: Kind; child: Child<Port>; params: Record<string, string>; providers: number };

async function loadAll(targets: Target[]): Promise<LoadResult[]> {
  const agents = targets.map(() => keepAliveAgent(CONCURRENCY));
  const specs = targets.map((t) => ({ url: searchUrl(t.child, t.params) }));
  const totals = targets.map((): LoadResult => ({
    rps: 0,
    completed: 0,
    errors: 0,
    latencies: [],
  }));
  try {
    for (const [i, t] of targets.entries()) await verify(t.kind, specs[i]!.url, t.providers);
    for (const [i, spec] of specs.entries()) {
      await closedLoop(spec, CONCURRENCY, 0, WARM_MS, agents[i]);
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (let k = 0; k < targets.length; k++) {
        const i = (k + round) % targets.length;
        const window = await closedLoop(specs[i]!, CONCURRENCY, 0, WINDOW_MS, agents[i]);
        const total = totals[i]!;
        total.completed += window.completed;
        total.errors += window.errors;
        total.latencies.push(...window.latencies);
      }
    }
  } finally {
    for (const agent of agents) agent.destroy();
  }
  for (const total of totals) total.rps = total.completed / (ROUNDS * WINDOW_MS / 1000);
  return totals;
}

const rate = (r: LoadResult) =>
  `${Math.round(r.rps)}/s${r.errors > 0 ? ` (${r.errors} errors)` : ""}`;
const lat = (r: LoadResult) => `${ms(p50(r.latencies))} / ${ms(p99(r.latencies))}`;

export async function throughput(urls: Urls): Promise<Row[]> {
  const names = GROUPS.zero4;
  const params = { q: "deadline", limit: "10" };
  const children = await Promise.all([
    startGateway(urls, names),
    startGateway(urls, names),
    startNaive(urls, names),
    startCeiling(urls, "zero0"),
  ]);
  const [gwChild, mergedChild, naiveChild, ceilingChild] = children;
  let results: LoadResult[];
  try {
    results = await loadAll([
      { kind: "gateway", child: gwChild, params, providers: 4 },
      { kind: "gateway", child: mergedChild, params: { ...params, view: "merged" }, providers: 4 },
      { kind: "naive", child: naiveChild, params, providers: 4 },
      { kind: "ceiling", child: ceilingChild, params, providers: 1 },
    ]);
  } finally {
    await Promise.all(children.map((c) => c.stop()));
  }
  const [gateway, merged, naive, ceiling] = results as [
    LoadResult,
    LoadResult,
    LoadResult,
    LoadResult,
  ];
  const ratio = gateway.rps / naive.rps;
  return [
    {
      measurement: `4 searches/s, concurrency ${CONCURRENCY}, 4 zero-delay providers [4]`,
      gateway: rate(gateway),
      naive: rate(naive),
      reference: `ceiling ${rate(ceiling)}`,
      target: ">= 1.0x naive",
      result: verdict(ratio >= 1 && gateway.errors === 0),
    },
    {
      measurement: "4 gateway / naive",
      gateway: `${ratio.toFixed(2)}x`,
      naive: "1.00x",
      reference: `ceiling ${(ceiling.rps / naive.rps).toFixed(2)}x`,
      target: ">= 1.00x",
      result: verdict(ratio >= 1),
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
  ];
}
