/**
 * Scenario 6's rows about a store's round trips (docs/benchmarks.md): a gateway started as
 * `npm start` starts it over a Redis behind a TCP proxy that holds every chunk it sends for
 * SLOW_STORE_MS (tests/support/delay-proxy.ts), with everything a search may ask of the store
 * before its providers configured (caller limits, the answer cache, flights, breakers). Sequential
 * searches with `timeout_ms` SEARCH_TIMEOUT_MS over 4 zero-delay providers: their latency, how
 * many round trips each waited for in sequence (the proxy's chunks, a wave apart), and how many
 * commands Redis ran per search (INFO commandstats). It prints; it never fails on a number.
 */
import { roundTrips, startDelayProxy } from "../tests/support/delay-proxy.ts";
import { commandsRun, redisCliPath, storeGateway } from "./shared-state-fixtures.ts";
import { sequential } from "./http-client.ts";
import { type Row, verdict } from "./report.ts";
import { ms, p50, p99 } from "./stats.ts";
import { GROUPS, SCOPE, type Urls } from "./targets.ts";

/** The store: every round trip answered 200 ms late, under the 250 ms default timeout. */
const SLOW_STORE_MS = 200;
/** The store's timeout here (TRACEFETCH_STATE_TIMEOUT_MS). */
const STORE_TIMEOUT_MS = 1_000;
const PREFIX = "tracefetch-bench-slow:";
/** The search's budget, and the bar its answers must meet at p99. */
const SEARCH_TIMEOUT_MS = 300;
const ANSWER_P99_TARGET_MS = 350;
/** Chunks half a delayed round trip apart went out in sequence, not together. */
const GAP_MS = SLOW_STORE_MS / 2;
const WARM = 10;
const COUNT = 100;

let searches = 0;

/** The rows; `port` is the Redis the proxy forwards to. */
export async function slowStore(urls: Urls, port: number): Promise<Row[]> {
  const proxy = await startDelayProxy(port, SLOW_STORE_MS);
  const zero = GROUPS.zero4.map((name) => ({
    name,
    endpoint: urls[name] as string,
    scope: SCOPE,
    timeout_seconds: 10,
    cache_ttl_seconds: 60,
  }));
  const gateway = await storeGateway(
    zero,
    `redis://127.0.0.1:${proxy.port}`,
    { caller_limits: { searches_per_minute: 1_000 } },
    // Far above the delay, so that a busy machine's late timers never make the store time out:
    // only the search's own budget bounds a wait. Keys of their own, apart from (c)'s count.
    { TRACEFETCH_STATE_TIMEOUT_MS: String(STORE_TIMEOUT_MS), TRACEFETCH_STATE_PREFIX: PREFIX },
  );
  const cli = redisCliPath();
  try {
    /** When each search was sent: the client builds its URL right before. */
    const sent: number[] = [];
    const url = () => {
      sent.push(performance.now());
      const q = `slow store ${++searches}`;
      return `${gateway.url}/v1/search?${new URLSearchParams({
        q,
        limit: "10",
        providers: GROUPS.zero4.join(","),
        timeout_ms: String(SEARCH_TIMEOUT_MS),
      })}`;
    };
    const before = cli === null ? null : await commandsRun(cli, port);
    const runs = await sequential({ url }, WARM, COUNT);
    const after = cli === null ? null : await commandsRun(cli, port);
    const status = await (await fetch(`${gateway.url}/v1/status`)).json() as {
      result?: { shared_state?: { state: string; fallbacks: number } };
    };
    const shared = status.result?.shared_state;
    const times = runs.map((r) => r.ms);
    const ok = runs.filter((r) => r.status === 200).length;
    const trips = runs.map((run, i) => {
      const from = sent[WARM + i] as number;
      return roundTrips(proxy.writes, from, from + run.ms, GAP_MS);
    });
    const perSearch = before === null || after === null
      ? "no redis-cli"
      : ((after - before) / (WARM + COUNT)).toFixed(1);
    return [{
      measurement: `6 store ${SLOW_STORE_MS} ms late, timeout_ms ${SEARCH_TIMEOUT_MS}, p50 [6]`,
      gateway: ms(p50(times)),
      naive: "",
      reference: `${ok} of ${COUNT} answered 200; round trips in sequence per search p50 ${
        p50(trips)
      }, max ${Math.max(...trips)}; Redis commands per search ${perSearch}; ${
        shared?.fallbacks ?? "?"
      } fallbacks`,
      target: "(info)",
      result: "",
    }, {
      measurement: `6 store ${SLOW_STORE_MS} ms late, timeout_ms ${SEARCH_TIMEOUT_MS}, p99`,
      gateway: ms(p99(times)),
      naive: "",
      reference: `max ${ms(Math.max(...times))}`,
      target: `<= ${ANSWER_P99_TARGET_MS} ms, all 200, none from memory`,
      result: verdict(
        p99(times) <= ANSWER_P99_TARGET_MS && ok === COUNT && shared?.fallbacks === 0,
      ),
    }];
  } finally {
    await gateway.stop();
    await proxy.close();
  }
}
