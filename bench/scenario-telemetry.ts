/**
 * Scenario 9, what observing a search costs (docs/deploy.md, "Observing it"): the p50 of scenario
 * 6's search (4 zero-delay providers of 10 candidates) on a gateway with metrics kept and traces
 * exported (http/protobuf, the default) to a loopback OTLP/HTTP receiver, beside the same search on
 * a gateway with both off, taking turns, and each gateway process's CPU per search. It prints; it
 * never fails on a number.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startOtlpReceiver } from "../tests/support/otlp-receiver.ts";
import type { CpuProfile } from "./cpu-profile.ts";
import { cpuMs } from "./cpu.ts";
import { interleaved, sequential, STEADY_STATE_SEARCHES } from "./http-client.ts";
import { topSelfTime } from "./profile.ts";
import { type Row, verdict } from "./report.ts";
import { startGateway } from "./soak-gateway.ts";
import { ms, p50 } from "./stats.ts";
import { GROUPS, SCOPE, type Urls } from "./targets.ts";

/** The bar: observing a search adds at most 0.2 ms at p50. */
const OVERHEAD_TARGET_MS = 0.2;
/**
 * Rounds before the count: the bar is what observing costs a gateway in service, so both are first
 * brought to their steady state. After 50 rounds V8 is still compiling (on its background threads)
 * the code a search runs, more of it on the observed gateway (the SDK, prom-client): CPU per search
 * measured over the next 500 was about twice what it is after 1,000, as scenario 4 warms too.
 */
const WARM = STEADY_STATE_SEARCHES;
/** Scenario 6's count. */
const COUNT = 500;
/** A pause after the warm-up, for the start's background work to end before the CPU is read. */
const SETTLE_MS = 2_000;

/** The two gateways' settings: observed (metrics, traces to `receiver`) and plain. */
function environments(urls: Urls, receiver: string) {
  const providers = GROUPS.zero4.map((name) => ({
    name,
    endpoint: urls[name] as string,
    scope: SCOPE,
    timeout_seconds: 10,
  }));
  const base = {
    HOST: "127.0.0.1",
    PORT: "0",
    TRACEFETCH_MANIFEST: JSON.stringify({ schema_version: "tracefetch.providers.v1", providers }),
    TRACEFETCH_ALLOW_LOOPBACK: "1",
    TRACEFETCH_API_DOCS: "0",
    TRACEFETCH_STATE_URL: "",
  };
  return {
    // The encoding an operator gets when OTEL_EXPORTER_OTLP_PROTOCOL is unset.
    on: { ...base, OTEL_EXPORTER_OTLP_ENDPOINT: receiver },
    off: { ...base, TRACEFETCH_METRICS: "off", OTEL_EXPORTER_OTLP_ENDPOINT: "" },
  };
}

const search = `/v1/search?${new URLSearchParams({
  q: "observed",
  limit: "10",
  providers: GROUPS.zero4.join(","),
})}`;

export async function telemetryOverhead(urls: Urls): Promise<Row[]> {
  const receiver = await startOtlpReceiver();
  const env = environments(urls, receiver.url);
  const [on, off] = await Promise.all([startGateway(env.on), startGateway(env.off)]);
  try {
    const probes = [{ url: `${on.url}${search}` }, { url: `${off.url}${search}` }];
    await interleaved(probes, WARM, 0);
    // What a gateway does once at start (the exporter's import, in the background, and compiling
    // the code a search runs) is not a search's cost: the CPU is read from here, after the warm-up
    // and a pause.
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const cpuBefore = [cpuMs(on.pid), cpuMs(off.pid)];
    const [observed, plain] = await interleaved(probes, 0, COUNT);
    // The gateway process's own CPU per search: exports, timers and GC count too.
    const [cpuOn, cpuOff] = [cpuMs(on.pid), cpuMs(off.pid)].map((after, i) =>
      (after - (cpuBefore[i] as number)) / COUNT
    ) as [number, number];
    const times = (runs: typeof observed) => (runs ?? []).map((t) => t.ms);
    const [a, b] = [p50(times(observed)), p50(times(plain))];
    // Each round's two searches ran one after the other: the median of their differences leaves
    // out most of the machine's own drift, which the two p50s each carry.
    const plainTimes = times(plain);
    const paired = p50(times(observed).map((t, i) => t - (plainTimes[i] ?? t)));
    const spans = receiver.spans.length;
    return [{
      measurement: "9 search with metrics and traces on, 4 zero-delay providers, p50 [9]",
      gateway: ms(a),
      naive: "",
      reference: `both off ${ms(b)}; paired median ${paired >= 0 ? "+" : ""}${
        ms(paired)
      }; ${spans} spans received`,
      target: `<= +${OVERHEAD_TARGET_MS} ms`,
      result: verdict(a - b <= OVERHEAD_TARGET_MS),
    }, {
      measurement: "9 CPU per search, metrics and traces on",
      gateway: ms(cpuOn),
      naive: "",
      reference: `both off ${ms(cpuOff)}`,
      target: "(info)",
      result: "",
    }];
  } finally {
    await Promise.all([on.stop(), off.stop()]);
    await receiver.close();
  }
}

/** Searches each profiled gateway serves: enough samples to rank functions of a few µs. */
const PROFILED_SEARCHES = 2_000;

/**
 * `npm run bench -- --profile --only 9`: the observed and the plain gateway each profiled
 * (`--cpu-prof`, written when it exits) over the same sequential searches, summarised side by side.
 */
export async function profileTelemetry(urls: Urls): Promise<string> {
  const receiver = await startOtlpReceiver();
  const env = environments(urls, receiver.url);
  const out: string[] = [];
  try {
    for (const [name, vars] of [["on", env.on], ["off", env.off]] as const) {
      const dir = mkdtempSync(join(tmpdir(), "tracefetch-prof-"));
      try {
        const gateway = await startGateway(vars, 60_000, ["--cpu-prof", `--cpu-prof-dir=${dir}`]);
        await sequential({ url: `${gateway.url}${search}` }, WARM, PROFILED_SEARCHES);
        await gateway.stop();
        const file = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
        if (file === undefined) throw new Error(`no profile written by the ${name} gateway`);
        const profile = JSON.parse(readFileSync(join(dir, file), "utf8")) as CpuProfile;
        out.push(
          `CPU profile, metrics and traces ${name}: ${PROFILED_SEARCHES} sequential searches` +
            " (start-up included), 4 zero-delay providers",
          topSelfTime(profile, 25),
          "",
        );
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  } finally {
    await receiver.close();
  }
  return out.join("\n");
}
