/**
 * Latency scenarios: (1) overhead over 8 providers that each take 50 ms, (2) time to the first
 * streamed `provider` event, (5) unloaded latency over zero-delay providers. Sequential requests,
 * after a warm-up, so each number is the cost of one search alone; the gateway, the naive baseline
 * and a direct call to one provider take turns, so background load falls on all of them alike.
 */
import type { Child } from "./children.ts";
import { interleaved, type RequestSpec, type Timed } from "./http-client.ts";
import { type Row, verdict } from "./report.ts";
import { ms, p50, p99 } from "./stats.ts";
import {
  GROUPS,
  type Port,
  providerRequest,
  searchUrl,
  startCeiling,
  startGateway,
  startNaive,
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

/** Starts the gateway and the naive baseline over the same providers, and checks both answer. */
async function pair(
  urls: Urls,
  names: readonly string[],
  params: Record<string, string>,
): Promise<{ gateway: Child<Port>; naive: Child<Port>; specs: RequestSpec[] }> {
  const [gateway, naive] = await Promise.all([startGateway(urls, names), startNaive(urls, names)]);
  const specs = [{ url: searchUrl(gateway, params) }, { url: searchUrl(naive, params) }];
  await verify("gateway", specs[0]!.url, names.length);
  await verify("naive", specs[1]!.url, names.length);
  return { gateway, naive, specs };
}

/** 1: latency minus the providers' 50 ms, gateway and naive, with a direct call as the floor. */
export async function overhead(urls: Urls): Promise<Row[]> {
  const { gateway, naive, specs } = await pair(urls, GROUPS.slow8, { q: "deadline", limit: "50" });
  let runs: Timed[][];
  try {
    runs = await interleaved([...specs, direct(urls.slow0, 50)], 20, 200);
  } finally {
    await Promise.all([gateway.stop(), naive.stop()]);
  }
  const [gw, nv, floor] = runs.map((r) => less(totals(r), 50)) as [number[], number[], number[]];
  return [
    {
      measurement: "1 overhead p50 (8 providers x 50 cand., 50 ms each) [1]",
      gateway: ms(p50(gw)),
      naive: ms(p50(nv)),
      reference: `direct ${ms(p50(floor))}`,
      target: "<= 2 ms",
      result: verdict(p50(gw) <= 2),
    },
    {
      measurement: "1 overhead p99",
      gateway: ms(p99(gw)),
      naive: ms(p99(nv)),
      reference: `direct ${ms(p99(floor))}`,
      target: "(info)",
      result: "",
    },
  ];
}

/** 2: from the request's start to the first `provider` event, minus the fastest provider's 10 ms. */
export async function firstEvent(urls: Urls): Promise<Row[]> {
  const gateway = await startGateway(urls, GROUPS.first3);
  let runs: Timed[][];
  try {
    await verify("gateway", searchUrl(gateway, { q: "deadline", limit: "10" }), 3);
    const stream: RequestSpec = {
      url: searchUrl(gateway, { q: "deadline", limit: "10", stream: "ndjson" }),
      markLine: '{"event":"provider"',
    };
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
  }];
}

/** 5: unloaded p50 with 4 and 8 zero-delay providers of 10 candidates each. */
export async function unloaded(urls: Urls): Promise<Row[]> {
  const params = { q: "deadline", limit: "10" };
  const ceiling = await startCeiling(urls, "zero0");
  const rows: Row[] = [];
  try {
    const ceilingSpec = { url: searchUrl(ceiling, params) };
    await verify("ceiling", ceilingSpec.url, 1);
    for (const [names, bound] of [[GROUPS.zero4, 2], [GROUPS.zero8, 3]] as const) {
      const { gateway, naive, specs } = await pair(urls, names, params);
      let runs: Timed[][];
      try {
        runs = await interleaved([...specs, ceilingSpec], 50, 300);
      } finally {
        await Promise.all([gateway.stop(), naive.stop()]);
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
