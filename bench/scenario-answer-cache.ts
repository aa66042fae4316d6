/**
 * Scenario 7, the answer cache over Redis (docs/envelope.md, "Cached answers"): two gateways over
 * one Redis, every provider with `cache_ttl_seconds`; A asks once, then B repeats the same search:
 * its p50 and p99 over loopback among hits only, then beside the same search with
 * `max_age_seconds=0` (the providers asked every time, their answers written back after each), for
 * scenario 6's search (4 zero-delay providers of 10 candidates) and scenario 1's (8 providers at
 * 50 ms). It prints; it never fails on a number.
 *
 * Boundary: a real redis-server on a free loopback port and gateways started as `npm start` starts
 * them (soak-gateway.ts). Without redis-server the scenario is one row saying it was skipped.
 */
import { redisServerPath, startRedis } from "../tests/support/redis-server.ts";
import { interleaved, type Timed } from "./http-client.ts";
import { type Row, verdict } from "./report.ts";
import { storeGateway } from "./shared-state-fixtures.ts";
import type { SoakGateway } from "./soak-gateway.ts";
import { ms, p50, p99 } from "./stats.ts";
import { GROUPS, SCOPE, type Urls } from "./targets.ts";

/** The bar: a search answered from the cache takes at most 3 ms at p50 over loopback. */
const CACHED_P50_TARGET_MS = 3;
/** Sequential searches per case after WARM unrecorded rounds: scenario 6's counts. */
const WARM = 50;
const COUNT = 500;

type Envelope = { code?: string; result?: { candidates?: Array<{ cached?: boolean }> } };

/** The two searches measured: scenario 6's (4 zero-delay providers) and scenario 1's (8 at 50 ms). */
const CASES = [
  { label: "4 zero-delay providers", names: GROUPS.zero4, limit: "10" },
  { label: "8 providers at 50 ms", names: GROUPS.slow8, limit: "20" },
] as const;

function cacheGateway(urls: Urls, redis: string): Promise<SoakGateway> {
  const providers = CASES.flatMap((c) => c.names).map((name) => ({
    name,
    endpoint: urls[name] as string,
    scope: SCOPE,
    timeout_seconds: 10,
    cache_ttl_seconds: 3600,
  }));
  return storeGateway(providers, redis);
}

async function envelope(url: string): Promise<Envelope> {
  return await (await fetch(url)).json() as Envelope;
}

/** Scenario 7; one row saying so when there is no redis-server to run against. */
export async function answerCache(urls: Urls): Promise<Row[]> {
  if (redisServerPath() === null) {
    const measurement = "7 answer cache: skipped, redis-server is not installed";
    return [{ measurement, gateway: "", naive: "", reference: "", target: "", result: "" }];
  }
  const redis = await startRedis();
  try {
    const [a, b] = await Promise.all([
      cacheGateway(urls, redis.url),
      cacheGateway(urls, redis.url),
    ]);
    try {
      const searches = CASES.map((c) =>
        `/v1/search?${new URLSearchParams({
          q: "cached",
          limit: c.limit,
          providers: c.names.join(","),
        })}`
      );
      for (const search of searches) {
        const first = await envelope(`${a.url}${search}`);
        if (first.code !== "ok") throw new Error(`A's search answered ${first.code}`);
      }
      // A's writes run after its answers: a moment for them to land.
      await new Promise((resolve) => setTimeout(resolve, 100));
      for (const search of searches) {
        const repeat = await envelope(`${b.url}${search}`);
        const cached = repeat.result?.candidates?.every((c) => c.cached === true) ?? false;
        if (!cached) throw new Error("B's repeat was not answered from the cache");
      }
      // The bar's pass: B's cached searches taking turns with each other only, so what a hit
      // costs is not mixed with the background writes an asked search leaves behind it.
      const hits = await interleaved(
        searches.map((search) => ({ url: `${b.url}${search}` })),
        WARM,
        COUNT,
      );
      // The reference pass: the same hits taking turns with the searches every provider answers,
      // whose answers are stored again in the background as the next search arrives.
      const mixed = await interleaved(
        searches.flatMap((search) => [
          { url: `${b.url}${search}` },
          { url: `${b.url}${search}&max_age_seconds=0` },
        ]),
        WARM,
        COUNT,
      );
      for (const g of [a, b]) {
        if (g.faultLines.length > 0) throw new Error(`a gateway faulted: ${g.faultLines[0]}`);
      }
      const times = (runs: Timed[][], i: number) => (runs[i] ?? []).map((t) => t.ms);
      return CASES.flatMap((c, i) => {
        const hit = times(hits, i);
        const [mixedHit, asked] = [times(mixed, 2 * i), times(mixed, 2 * i + 1)];
        return [{
          measurement: `7 cached search over Redis, ${c.label}, p50 [7]`,
          gateway: ms(p50(hit)),
          naive: "",
          reference: `providers asked (max_age_seconds=0) ${ms(p50(asked))}`,
          target: i === 0 ? `<= ${CACHED_P50_TARGET_MS} ms` : "(info)",
          result: i === 0 ? verdict(p50(hit) <= CACHED_P50_TARGET_MS) : "",
        }, {
          measurement: `7 cached search, ${c.label}, p99`,
          gateway: ms(p99(hit)),
          naive: "",
          reference: `providers asked ${ms(p99(asked))}`,
          target: "(info)",
          result: "",
        }, {
          measurement: `7 cached search between asked ones, ${c.label}, p50 / p99`,
          gateway: `${ms(p50(mixedHit))} / ${ms(p99(mixedHit))}`,
          naive: "",
          reference: "",
          target: "(info)",
          result: "",
        }];
      });
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  } finally {
    await redis.stop();
  }
}
