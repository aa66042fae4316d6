/**
 * Latency scenarios: (1) overhead over 8 providers that each take 50 ms, against the client's own 8
 * concurrent calls to them, (2) time to the first streamed `provider` event, (5) unloaded latency
 * over zero-delay providers. Sequential requests, after each target is warmed to its steady state
 * (`warmToSteadyState`), so each number is the cost of one search alone in service; the gateway,
 * the naive baseline and the reference take turns, so background load falls on all of them alike.
 * Every search carries a distinct query. p99 is reported beside every p50.
 */
import type { Child } from "./children.ts";
import {
  interleaved,
  type Probe,
  type RequestSpec,
  type Timed,
  warmToSteadyState,
} from "./http-client.ts";
import { type Row, verdict } from "./report.ts";
import { ms, p50, p99 } from "./stats.ts";
import {
  distinctSearches,
  GROUPS,
  type Port,
  providerRequest,
  searchUrl,
  SLOW_CANDIDATES,
  startCeiling,
  startGateway,
  startNaive,
  startRelay,
  type Urls,
  verify,
} from "./targets.ts";

const totals = (runs: Timed[] | undefined) => (runs ?? []).map((r) => r.ms);
const less = (xs: number[], delay: number) => xs.map((x) => x - delay);

/** A direct call to one provider: the floor of timer slack and one HTTP exchange. */
const direct = (url: string | undefined, limit: number): RequestSpec => ({
  url: url as string,
  method: "POST",
  body: providerRequest(limit),
});

/** The bars for one search over 8 providers at 50 ms, against the client's own calls. */
const OVERHEAD_P50_TARGET_MS = 1;
const OVERHEAD_P99_TARGET_MS = 5;

/**
 * Starts the gateway and the naive baseline over the same providers (and, with `compare`, the
 * gateway of another checkout), checks each answers, and gives each a distinct-query probe.
 */
async function pair(
  urls: Urls,
  names: readonly string[],
  params: Record<string, string>,
  compare?: string,
): Promise<{ children: Child<Port>[]; specs: RequestSpec[] }> {
  const children = await Promise.all([
    startGateway(urls, names),
    startNaive(urls, names),
    ...(compare === undefined ? [] : [startGateway(urls, names, [], compare)]),
  ]);
  const kinds = ["gateway", "naive", "gateway"] as const;
  for (const [i, child] of children.entries()) {
    await verify(kinds[i] as "gateway" | "naive", searchUrl(child, params), names.length);
  }
  return { children, specs: children.map((child) => ({ url: distinctSearches(child, params) })) };
}

const lat = (xs: number[]) => `${ms(p50(xs))} / ${ms(p99(xs))}`;

/** Refuses to measure a relay that does not hand back every provider's answer. */
async function verifyRelay(url: string, providers: number): Promise<void> {
  const res = await fetch(url);
  const body = (await res.json()) as unknown;
  if (res.status !== 200 || !Array.isArray(body) || body.length !== providers) {
    throw new Error(`the relay at ${url} answered ${res.status}`);
  }
}

/**
 * 1: what the gateway adds to one search over 8 providers that each answer after 50 ms: its
 * latency at p50 and p99 minus the client's own 8 concurrent calls to the same providers, which
 * carry the same 50 ms, the same timer slack and the same connections. The relay takes its turns
 * too: what one more process and one more HTTP exchange cost here, doing nothing else.
 */
export async function overhead(urls: Urls, compare?: string): Promise<Row[]> {
  const params = { q: "deadline", limit: String(SLOW_CANDIDATES) };
  const { children, specs } = await pair(urls, GROUPS.slow8, params, compare);
  const own: Probe = GROUPS.slow8.map((name) => direct(urls[name], SLOW_CANDIDATES));
  let runs: Timed[][];
  try {
    const relay = await startRelay(urls, GROUPS.slow8);
    children.push(relay);
    await verifyRelay(searchUrl(relay, params), GROUPS.slow8.length);
    const relayed = { url: distinctSearches(relay, params) };
    await warmToSteadyState([...specs, relayed]);
    runs = await interleaved([own, ...specs, relayed], 20, 200);
  } finally {
    await Promise.all(children.map((c) => c.stop()));
  }
  const floor = totals(runs[0]);
  const [gw, nv, cmp] = runs.slice(1, -1).map(totals) as [number[], number[], number[]?];
  const relayed = totals(runs.at(-1));
  const over = (xs: number[], p: (v: readonly number[]) => number) => p(xs) - p(floor);
  const both = (xs: number[]) => `${ms(over(xs, p50))} / ${ms(over(xs, p99))}`;
  const rows: Row[] = [
    {
      measurement: "1 overhead p50, 8 providers x 20 cand. at 50 ms [1]",
      gateway: ms(over(gw, p50)),
      naive: ms(over(nv, p50)),
      reference: `own 8 calls ${ms(p50(floor))}`,
      target: `<= ${OVERHEAD_P50_TARGET_MS} ms`,
      result: verdict(over(gw, p50) <= OVERHEAD_P50_TARGET_MS),
    },
    {
      measurement: "1 overhead p99",
      gateway: ms(over(gw, p99)),
      naive: ms(over(nv, p99)),
      reference: `own 8 calls ${ms(p99(floor))}`,
      target: `<= ${OVERHEAD_P99_TARGET_MS} ms`,
      result: verdict(over(gw, p99) <= OVERHEAD_P99_TARGET_MS),
    },
    {
      measurement: "1 latency p50 / p99",
      gateway: lat(gw),
      naive: lat(nv),
      reference: `own 8 calls ${lat(floor)}`,
      target: "(info)",
      result: "",
    },
    {
      measurement: "1 relay (one more hop, no work): overhead p50 / p99",
      gateway: both(relayed),
      naive: "",
      reference: `gateway ${both(gw)}`,
      target: "(info)",
      result: "",
    },
  ];
  if (cmp !== undefined) {
    rows.push({
      measurement: "1 compared tree: overhead p50 / p99",
      gateway: both(cmp),
      naive: "",
      reference: `this tree ${both(gw)}`,
      target: "(info)",
      result: "",
    });
  }
  return rows;
}

/** 2: from the request's start to the first `provider` event, minus the fastest provider's 10 ms. */
export async function firstEvent(urls: Urls): Promise<Row[]> {
  const gateway = await startGateway(urls, GROUPS.first3);
  let runs: Timed[][];
  try {
    await verify("gateway", searchUrl(gateway, { q: "deadline", limit: "10" }), 3);
    const stream: RequestSpec = {
      url: distinctSearches(gateway, { q: "deadline", limit: "10", stream: "ndjson" }),
      markLine: '{"event":"provider"',
    };
    await warmToSteadyState([stream]);
    runs = await interleaved([stream, direct(urls.first10, 10)], 20, 100);
  } finally {
    await gateway.stop();
  }
  const [streamed = [], floorRuns] = runs;
  if (streamed.some((r) => r.markMs === null || r.status !== 200)) {
    throw new Error("a streamed search had no provider event");
  }
  const marks = less(streamed.map((r) => r.markMs as number), 10);
  const floor = less(totals(floorRuns), 10);
  return [{
    measurement: "2 first provider event p50, NDJSON (10/30/50 ms) [2]",
    gateway: ms(p50(marks)),
    naive: "n/a (no stream)",
    reference: `direct ${ms(p50(floor))}`,
    target: "<= 2 ms",
    result: verdict(p50(marks) <= 2),
  }, {
    measurement: "2 first provider event p99",
    gateway: ms(p99(marks)),
    naive: "n/a (no stream)",
    reference: `direct ${ms(p99(floor))}`,
    target: "(info)",
    result: "",
  }];
}

/** 5: unloaded p50 with 4 and 8 zero-delay providers of 10 candidates each. */
export async function unloaded(urls: Urls): Promise<Row[]> {
  const params = { q: "deadline", limit: "10" };
  const ceiling = await startCeiling(urls, "zero0");
  const rows: Row[] = [];
  try {
    await verify("ceiling", searchUrl(ceiling, params), 1);
    const ceilingSpec = { url: distinctSearches(ceiling, params) };
    await warmToSteadyState([ceilingSpec]);
    for (const [names, bound] of [[GROUPS.zero4, 2], [GROUPS.zero8, 3]] as const) {
      const { children, specs } = await pair(urls, names, params);
      let runs: Timed[][];
      try {
        await warmToSteadyState(specs);
        runs = await interleaved([...specs, ceilingSpec], 50, 300);
      } finally {
        await Promise.all(children.map((c) => c.stop()));
      }
      const [gw, nv, top] = runs.map(totals) as [number[], number[], number[]];
      rows.push({
        measurement: `5 unloaded p50, ${names.length} zero-delay providers x 10 cand. [5]`,
        gateway: ms(p50(gw)),
        naive: ms(p50(nv)),
        reference: `ceiling ${ms(p50(top))}`,
        target: `<= ${bound} ms`,
        result: verdict(p50(gw) <= bound),
      }, {
        measurement: `5 unloaded p99, ${names.length} providers`,
        gateway: ms(p99(gw)),
        naive: ms(p99(nv)),
        reference: `ceiling ${ms(p99(top))}`,
        target: "(info)",
        result: "",
      });
    }
  } finally {
    await ceiling.stop();
  }
  return rows;
}
