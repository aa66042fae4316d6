/**
 * `npm run soak -- --minutes 10`: runs the Node gateway, started as `npm start` starts it, against
 * seven misbehaving providers and a corpus that implements expand and refresh
 * (bench/soak-providers.ts) under a steady mixed load of searches, expands, refreshes and MCP calls
 * (bench/soak-load.ts), prints a line every 10 s, and at the end checks what a long run should
 * leave behind: no crash, no escaped or internal error, every answer an envelope (or, from /mcp,
 * a JSON-RPC answer whose tool results carry envelopes), no 5xx but the documented ones, no hung
 * request, no search still in flight, and no memory growth. Exits 1 when any check fails.
 *
 * Options: --minutes N (default 10, fractions allowed), --rate N (requests due per second, default
 * 40), --seed N (the load's random choices), --json (the summary as JSON too).
 */
import { availableParallelism, loadavg } from "node:os";
import { Agent, fetch } from "undici";
import { installCleanup, killAllAndWait, startChild } from "./children.ts";
import { readVm } from "./memory.ts";
import { MiB, p50, p99 } from "./stats.ts";
import { seeded } from "../tests/support/random.ts";
import { type RssCheck, rssGrowth, type RssSample } from "./soak-checks.ts";
import { type Descriptors, descriptors, type GatewayExit, startGateway } from "./soak-gateway.ts";
import {
  CLIENT_ABORTED,
  HUNG,
  KINDS,
  Load,
  SLOW_BODY_CLOSED,
  Tally,
  UNCLASSIFIED,
} from "./soak-load.ts";
import {
  CLIENT_MAX_INFLIGHT,
  DEFAULT_MINUTES,
  DEFAULT_RATE,
  HUNG_GRACE_MS,
  IDLE_RECHECK_MS,
  MAX_RSS_GROWTH,
  MAX_SATURATED_SHARE,
  REPORT_EVERY_MS,
  RSS_SAMPLE_EVERY_MS,
  SLOW_BODY_DEADLINE_MS,
  soakAuth,
  soakManifest,
  type SoakProvidersInfo,
  type SoakProviderStats,
} from "./soak-setup.ts";

type Options = { minutes: number; rate: number; seed: number; json: boolean };

const USAGE = "usage: npm run soak -- [--minutes N] [--rate N] [--seed N] [--json]";

function parseArgs(argv: readonly string[]): Options {
  const options: Options = {
    minutes: DEFAULT_MINUTES,
    rate: DEFAULT_RATE,
    seed: Date.now() % 1_000_000,
    json: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const [name, inline] = arg.includes("=") ? arg.split("=", 2) as [string, string] : [arg, null];
    const value = () => {
      const raw = inline ?? argv[++i];
      const n = Number(raw);
      if (raw === undefined || !Number.isFinite(n) || n <= 0) {
        throw new UsageError(`${name} needs a positive number`);
      }
      return n;
    };
    switch (name) {
      case "--minutes":
        options.minutes = value();
        break;
      case "--rate":
        options.rate = value();
        break;
      case "--seed":
        options.seed = Math.floor(value());
        break;
      case "--json":
        options.json = true;
        break;
      case "--help":
      case "-h":
        console.log(USAGE);
        process.exit(0);
        break;
      default:
        throw new UsageError(`unknown option ${arg}`);
    }
  }
  return options;
}

class UsageError extends Error {}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const secs = (ms: number) => `${(ms / 1000).toFixed(0)} s`;
const mib = (bytes: number) => Number.isFinite(bytes) ? `${(bytes / MiB).toFixed(1)} MiB` : "n/a";
const pct = (x: number) => `${x >= 0 ? "+" : ""}${(x * 100).toFixed(1)}%`;

function rssOf(pid: number): number {
  try {
    return readVm(pid).rss;
  } catch {
    return Number.NaN;
  }
}

function codeSummary(codes: ReadonlyMap<string, number>): string {
  return [...codes].sort((a, b) => b[1] - a[1]).map(([code, n]) => `${code} ${n}`).join(", ");
}

/** The gateway's own count of searches in flight, polled until 0 or `maxMs`. */
async function searchesInFlight(url: string, maxMs: number): Promise<number | string> {
  const agent = new Agent({ pipelining: 0 });
  const until = performance.now() + maxMs;
  let last: number | string = "no answer";
  try {
    while (true) {
      try {
        const res = await fetch(`${url}/v1/status`, {
          dispatcher: agent,
          signal: AbortSignal.timeout(5_000),
        });
        const body = await res.json() as { result?: { searches_in_flight?: unknown } };
        const n = body.result?.searches_in_flight;
        last = typeof n === "number" ? n : "no searches_in_flight in the answer";
      } catch (error) {
        last = `no answer (${(error as Error).message})`;
      }
      if (last === 0 || performance.now() >= until) return last;
      await sleep(250);
    }
  } finally {
    await agent.destroy();
  }
}

/** Provider answers still open, polled until none or `maxMs`. */
async function providerAnswersOpen(
  request: (op: string) => Promise<unknown>,
  maxMs: number,
): Promise<SoakProviderStats> {
  const until = performance.now() + maxMs;
  while (true) {
    const stats = await request("stats") as SoakProviderStats;
    const open = Object.values(stats).reduce((sum, s) => sum + s.open, 0);
    if (open === 0 || performance.now() >= until) return stats;
    await sleep(250);
  }
}

type Check = { measurement: string; value: string; limit: string; ok: boolean | null };

function table(rows: readonly Check[]): string {
  const cells = [
    ["measurement", "value", "limit", "result"],
    ...rows.map((r) => [
      r.measurement,
      r.value,
      r.limit,
      r.ok === null ? "" : r.ok ? "PASS" : "FAIL",
    ]),
  ];
  const width = [0, 1, 2, 3].map((c) => Math.max(...cells.map((row) => (row[c] as string).length)));
  const line = (row: string[]) =>
    `| ${row.map((cell, c) => cell.padEnd(width[c] as number)).join(" | ")} |`;
  const rule = `|${width.map((w) => "-".repeat(w + 2)).join("|")}|`;
  return [line(cells[0] as string[]), rule, ...cells.slice(1).map(line)].join("\n");
}

function describeDescriptors(d: Descriptors | null): string {
  if (d === null) return "n/a";
  const t = d.tcp;
  return `${d.fds} fds, ${d.sockets} sockets (tcp: ${t.listening} listening, ${t.fromClients} from clients, ${t.toProviders} to providers, ${t.other} other)`;
}

async function main(): Promise<number> {
  const options = parseArgs(process.argv.slice(2));
  installCleanup();
  const loadMs = Math.round(options.minutes * 60_000);
  const bodyDeadlineMs = Number(process.env.TRACEFETCH_BODY_TIMEOUT_MS) || SLOW_BODY_DEADLINE_MS;
  const drainMs = Math.max(bodyDeadlineMs, 3_000) + HUNG_GRACE_MS + 2_000;
  // Start-up, drain and the end checks take well under three minutes even on a busy machine.
  const watchdog = setTimeout(() => {
    console.error("soak: still running long after its load ended; stopping");
    void killAllAndWait().finally(() => process.exit(1));
  }, loadMs + 180_000);

  console.log(
    `soak: ${options.minutes} min at ${options.rate} requests/s, seed ${options.seed}; node ${process.version}, ${availableParallelism()} CPUs, load average ${
      loadavg().map((l) => l.toFixed(2)).join(" ")
    }`,
  );
  const providers = await startChild<SoakProvidersInfo>("soak providers", "./soak-providers.ts");
  const urls = providers.info.urls;
  const providerPorts = Object.values(urls).map((u) => Number(new URL(u).port));
  // Caller tokens are verified with the run's own key: refresh needs one granting tracefetch-admin.
  const auth = await soakAuth(options.minutes);
  const gateway = await startGateway({
    PORT: "0",
    HOST: "127.0.0.1",
    TRACEFETCH_MANIFEST: soakManifest(urls),
    TRACEFETCH_ALLOW_LOOPBACK: "1",
    ...auth.env,
  });
  await providers.request("guard", gateway.pid);
  // An object, so the exit recorded in the callback is seen where the run reads it.
  const run: { crash: GatewayExit | null } = { crash: null };
  const crashed = new Promise<void>((resolve) =>
    gateway.onExit((exit) => {
      run.crash = exit;
      void providers.request("unguard").catch(() => {});
      resolve();
    })
  );
  console.log(
    `soak: gateway pid ${gateway.pid} at ${gateway.url}; providers on ports ${
      providerPorts.join(", ")
    }`,
  );

  const before = descriptors(gateway.pid, gateway.port, providerPorts);
  const rssStart = rssOf(gateway.pid);
  const tally = new Tally();
  const load = new Load({
    url: gateway.url,
    port: gateway.port,
    rate: options.rate,
    random: seeded(options.seed),
    tally,
    bodyDeadlineMs,
    tokens: { admin: auth.admin, reader: auth.reader },
  });
  const samples: RssSample[] = [];
  const t0 = performance.now();
  const sample = () => {
    const rss = rssOf(gateway.pid);
    if (Number.isFinite(rss)) samples.push({ t: performance.now() - t0, rss });
  };
  sample();
  const sampler = setInterval(sample, RSS_SAMPLE_EVERY_MS);
  const reporter = setInterval(() => {
    console.log(
      `[${secs(performance.now() - t0).padStart(6)}] done ${tally.done} | ${
        codeSummary(tally.codes)
      } | rss ${mib(samples.at(-1)?.rss ?? Number.NaN)} | in flight ${load.inflight}${
        tally.saturated > 0 ? ` | saturated ${tally.saturated}` : ""
      }`,
    );
  }, REPORT_EVERY_MS);
  load.start();
  await Promise.race([sleep(loadMs), crashed]);
  const loadEndedMs = performance.now() - t0;
  load.stop();
  clearInterval(reporter);
  clearInterval(sampler);
  sample();
  const rssAtStop = samples.at(-1)?.rss ?? Number.NaN;
  console.log(
    `soak: load stopped after ${
      secs(loadEndedMs)
    }; waiting for ${load.inflight} requests in flight`,
  );
  const drained = await load.drain(run.crash === null ? drainMs : 5_000);
  await load.close();

  let inFlightAtEnd: number | string = "gateway not running";
  let providerStats: SoakProviderStats = {};
  let after: Descriptors | null = null;
  let idle: Descriptors | null = null;
  let rssEnd = Number.NaN;
  if (run.crash === null) {
    inFlightAtEnd = await searchesInFlight(gateway.url, 5_000);
    providerStats = await providerAnswersOpen(providers.request, 5_000);
    // Give the gateway a moment to see the client's connections close.
    await sleep(500);
    after = descriptors(gateway.pid, gateway.port, providerPorts);
    rssEnd = rssOf(gateway.pid);
    console.log(
      `soak: gateway ${describeDescriptors(after)}; checking again after ${
        secs(IDLE_RECHECK_MS)
      } idle`,
    );
    await sleep(IDLE_RECHECK_MS);
    idle = descriptors(gateway.pid, gateway.port, providerPorts);
  }
  const crashedDuringRun = run.crash;
  await providers.request("unguard").catch(() => {});
  const stopped = await gateway.stop();
  await providers.stop();
  clearTimeout(watchdog);

  const rss: RssCheck = rssGrowth(samples, loadEndedMs);
  const count = (code: string) => tally.codes.get(code) ?? 0;
  const unclassified = count(UNCLASSIFIED);
  const hung = count(HUNG) + (drained ? 0 : load.inflight);
  const escaped = gateway.faultLines.filter((l) => /escaped error/i.test(l)).length;
  const internal = gateway.faultLines.length - escaped;
  const openAnswers = Object.values(providerStats).reduce((sum, s) => sum + s.open, 0);
  const peakRss = Math.max(...samples.map((s) => s.rss));
  const envelopeCodes = new Map(
    [...tally.codes].filter(([c]) =>
      ![CLIENT_ABORTED, SLOW_BODY_CLOSED, HUNG, UNCLASSIFIED].includes(c)
    ),
  );
  const latency = Object.fromEntries(
    KINDS.map((kind) => {
      const s = tally.byKind.get(kind) as { started: number; ms: number[] };
      return [kind, {
        started: s.started,
        answered: s.ms.length,
        p50_ms: Math.round(p50(s.ms)),
        p99_ms: Math.round(p99(s.ms)),
        max_ms: s.ms.length === 0 ? Number.NaN : Math.round(s.ms.reduce((a, b) => Math.max(a, b))),
      }];
    }),
  );

  const shortRun = loadMs < 3 * 60_000;
  const checks: Check[] = [
    {
      measurement: "load",
      value: `${
        (loadEndedMs / 60_000).toFixed(1)
      } min at ${options.rate}/s: ${tally.due} due, ${tally.started} sent`,
      limit: "",
      ok: null,
    },
    {
      measurement: "requests by kind",
      value: KINDS.map((k) => `${k} ${latency[k]?.started ?? 0}`).join(", "),
      limit: "",
      ok: null,
    },
    {
      measurement: "answers by code",
      value: codeSummary(envelopeCodes) || "none",
      limit: "",
      ok: null,
    },
    ...(["expand", "refresh", "mcp", "mcp-garbage"] as const).map((kind) => ({
      measurement: `${kind} answers by code`,
      value: codeSummary(tally.kindCodes.get(kind) ?? new Map()) || "none",
      limit: "",
      ok: null,
    })),
    {
      measurement: "clients that left",
      value: `${count(CLIENT_ABORTED)} mid-search, ${count(SLOW_BODY_CLOSED)} stalled bodies`,
      limit: "",
      ok: null,
    },
    {
      measurement: "latency p50 / p99 / max",
      value: (["get", "post", "stream", "expand", "refresh", "mcp"] as const).map((k) =>
        `${k} ${latency[k]?.p50_ms} / ${latency[k]?.p99_ms} / ${latency[k]?.max_ms} ms`
      ).join("; "),
      limit: "",
      ok: null,
    },
    {
      measurement: "stalled body answered 408",
      value: count("request_timeout") > 0
        ? `${count("request_timeout")}, slowest after ${
          (tally.slowestRequestTimeout / 1000).toFixed(1)
        } s`
        : "none waited",
      limit: `within ${secs(bodyDeadlineMs + HUNG_GRACE_MS)}`,
      ok: null,
    },
    {
      measurement: "gateway process",
      value: crashedDuringRun
        ? `exited during the run (${crashedDuringRun.signal ?? crashedDuringRun.code})`
        : `ran throughout; exit on SIGTERM: ${stopped.signal ?? stopped.code}`,
      limit: "no crash",
      ok: crashedDuringRun === null,
    },
    {
      measurement: "escaped errors / internal errors (stderr)",
      value: `${escaped} / ${internal}`,
      limit: "0 / 0",
      ok: gateway.faultLines.length === 0,
    },
    {
      measurement: "unclassified answers",
      value: unclassified === 0
        ? "0"
        : `${unclassified}: ${[...tally.unclassified].map(([r, n]) => `${r} (${n})`).join("; ")}`,
      limit: "0",
      ok: unclassified === 0,
    },
    { measurement: "hung requests", value: String(hung), limit: "0", ok: hung === 0 },
    {
      measurement: "client saturated",
      value: `${tally.saturated} of ${tally.due} due (bound ${CLIENT_MAX_INFLIGHT} in flight)`,
      limit: `at most ${(MAX_SATURATED_SHARE * 100).toFixed(0)}%`,
      ok: tally.saturated <= MAX_SATURATED_SHARE * Math.max(1, tally.due),
    },
    {
      measurement: "searches_in_flight at the end",
      value: String(inFlightAtEnd),
      limit: "0",
      ok: inFlightAtEnd === 0,
    },
    {
      measurement: "provider answers left open",
      value: crashedDuringRun === null
        ? `${openAnswers} (${
          Object.entries(providerStats).map(([n, s]) => `${n} ${s.requests}`).join(", ")
        } requests)`
        : "n/a",
      limit: "0",
      ok: crashedDuringRun === null ? openAnswers === 0 : null,
    },
    {
      measurement: "gateway descriptors before the load",
      value: describeDescriptors(before),
      limit: "",
      ok: null,
    },
    {
      measurement: "gateway descriptors after the drain",
      value: describeDescriptors(after),
      limit: "",
      ok: null,
    },
    {
      measurement: `gateway descriptors ${secs(IDLE_RECHECK_MS)} later`,
      value: describeDescriptors(idle),
      limit: "no TCP connection but the listener",
      ok: idle === null ? null : idle.tcp.fromClients + idle.tcp.toProviders + idle.tcp.other === 0,
    },
    {
      measurement: "gateway RSS",
      value: `start ${mib(rssStart)}, peak ${mib(peakRss)}, at stop ${
        mib(rssAtStop)
      }, after drain ${mib(rssEnd)}`,
      limit: "",
      ok: null,
    },
    {
      measurement: "RSS growth",
      value: rss.checked
        ? `${mib(rss.last.median)} (${secs(rss.last.from)}-${secs(rss.last.to)}) vs ${
          mib(rss.baseline.median)
        } (${secs(rss.baseline.from)}-${secs(rss.baseline.to)}): ${pct(rss.growth)}`
        : "not checked",
      limit: `at most ${pct(MAX_RSS_GROWTH)}${shortRun ? " (short run, see note)" : ""}`,
      ok: rss.checked ? rss.ok : null,
    },
  ];
  const pass = checks.every((c) => c.ok !== false);

  console.log("");
  console.log(table(checks));
  console.log("");
  console.log(`RSS: ${rss.note}.`);
  if (tally.examples.length > 0) {
    console.log("first failures:");
    for (const e of tally.examples) console.log(`  ${e.kind}: ${e.what} -- ${e.detail}`);
  }
  if (gateway.faultLines.length > 0) {
    console.log("gateway fault lines:");
    for (const line of gateway.faultLines.slice(0, 10)) console.log(`  ${line}`);
  }
  if (gateway.stderr.total > 0) {
    console.log(`gateway stderr: ${gateway.stderr.total} lines; the first ones:`);
    for (const line of gateway.stderr.lines.slice(0, 20)) console.log(`  ${line}`);
  }
  console.log(pass ? "soak: PASS" : "soak: FAIL");
  if (options.json) {
    console.log(JSON.stringify(
      {
        minutes: options.minutes,
        rate: options.rate,
        seed: options.seed,
        load_ms: Math.round(loadEndedMs),
        due: tally.due,
        started: tally.started,
        saturated: tally.saturated,
        done: tally.done,
        codes: Object.fromEntries(tally.codes),
        unclassified: Object.fromEntries(tally.unclassified),
        examples: tally.examples,
        latency,
        slowest_request_timeout_ms: Math.round(tally.slowestRequestTimeout),
        rss: {
          start: rssStart,
          peak: peakRss,
          at_stop: rssAtStop,
          after_drain: rssEnd,
          growth: rss,
          samples: samples.map((s) => [Math.round(s.t), s.rss]),
        },
        descriptors: { before, after, idle },
        searches_in_flight: inFlightAtEnd,
        providers: providerStats,
        gateway: {
          crashed: crashedDuringRun,
          exit: stopped,
          fault_lines: gateway.faultLines.slice(0, 50),
          stderr_lines: gateway.stderr.total,
        },
        checks,
        pass,
      },
      null,
      2,
    ));
  }
  return pass ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof UsageError) {
      console.error(`soak: ${error.message}\n${USAGE}`);
      process.exit(2);
    }
    console.error("soak: fatal:", error);
    void killAllAndWait().finally(() => process.exit(1));
  },
);
