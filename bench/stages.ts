/**
 * The CPU of a search on Node split into its stages, from a V8 CPU profile of the gateway child
 * rather than from timers in the code, so the normal path carries no measurement. Each sample is
 * given to the stage of the innermost frame on its stack that belongs to one (a JSON.parse under
 * checkProviderAnswer is validation, a socket write under undici is the provider exchange, the
 * same write under Node's ServerResponse is encoding); samples with no such frame are "other".
 */
import type { Child } from "./children.ts";
import { cpuMs } from "./cpu.ts";
import { closedLoop, type RequestSpec } from "./http-client.ts";
import type { CpuProfile } from "./cpu-profile.ts";
import type { Port } from "./targets.ts";

export const STAGES = [
  "request parsing",
  "planning",
  "provider exchange",
  "body reading and validation",
  "sanitising",
  "fusion",
  "encoding",
  "garbage collection",
  "other",
] as const;
export type Stage = (typeof STAGES)[number];

type Frame = { functionName: string; url: string };
type Rule = { stage: Stage; url: RegExp; fn?: RegExp };

/**
 * Checked in order for each frame, innermost frame first. Frames of code shared by several stages
 * (Node's streams and sockets, Web classes) match nothing, so the caller above them decides.
 */
const RULES: Rule[] = [
  {
    stage: "body reading and validation",
    url: /src\/runtime\/node-fetch\.ts/,
    fn: /^(pull|decoded)$/,
  },
  {
    stage: "body reading and validation",
    url: /src\/transport\/http-provider\.ts/,
    fn: /^readAnswer$/,
  },
  {
    stage: "body reading and validation",
    url:
      /src\/transport\/(bounded-reader|answer-reader)\.ts|src\/protocol\/(check-provider-answer|provider-wire|json-value|read-provider-answer)\.ts|node_modules\/valibot\//,
  },
  { stage: "sanitising", url: /src\/core\/fan-out\.ts/, fn: /^toRecord$/ },
  { stage: "sanitising", url: /src\/core\/(sanitize|filters)\.ts|src\/transport\/redact\.ts/ },
  { stage: "fusion", url: /src\/core\/(fusion|dedup-key|search)\.ts/ },
  {
    stage: "encoding",
    url: /src\/envelope\/|src\/http\/(respond|encode-envelope)\.ts|src\/gateway\/search-run\.ts/,
  },
  {
    stage: "encoding",
    url: /node_modules\/@hono\/node-server\//,
    fn: /^(responseVia\w+|buildOutgoingHttpHeaders|writeDefaultHeaders|trySetContentLength)$/,
  },
  { stage: "encoding", url: /^node:_http_outgoing$/ },
  { stage: "encoding", url: /^node:_http_server$/, fn: /^(writeHead|_implicitHeader|end)$/ },
  {
    stage: "planning",
    url:
      /src\/core\/(plan|suspension)\.ts|src\/gateway\/(search-identity|gateway-state|flight|slots)\.ts|src\/auth\/caller\.ts/,
  },
  {
    stage: "provider exchange",
    url:
      /src\/runtime\/node-fetch\.ts|node_modules\/undici\/|src\/transport\/(http-provider|semaphore|classify|byte-budget|attempt-abort)\.ts|src\/core\/fan-out\.ts/,
  },
  {
    stage: "request parsing",
    url:
      /node_modules\/@hono\/node-server\/|node_modules\/hono\/|src\/http\/|src\/protocol\/(search-request|strict-json|search-filters)\.ts|src\/runtime\/node-listen\.ts/,
  },
  { stage: "request parsing", url: /^node:_http_(server|common|incoming)$/ },
];

function stageOf(frame: Frame): Stage | null {
  if (frame.functionName === "(garbage collector)") return "garbage collection";
  for (const rule of RULES) {
    if (rule.url.test(frame.url) && (rule.fn === undefined || rule.fn.test(frame.functionName))) {
      return rule.stage;
    }
  }
  return null;
}

export type Breakdown = {
  /** Searches served while the profiler ran. */
  searches: number;
  /** The process's CPU per search under the profiler (the profiler's own cost included). */
  processMs: number;
  /** Per stage, sampled time of the main thread per search. */
  stageMs: Record<Stage, number>;
  /** The frames most often left as "other", for tuning the rules. */
  unplaced: Array<[string, number]>;
};

/** Splits one profile's busy samples into stages, in ms per search. */
export function splitProfile(profile: CpuProfile, searches: number): Breakdown["stageMs"] & {
  unplaced: Breakdown["unplaced"];
} {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const memo = new Map<number, Stage | null>();
  const stageAt = (id: number): Stage | null => {
    if (memo.has(id)) return memo.get(id) as Stage | null;
    const node = byId.get(id);
    const own = node === undefined ? null : stageOf(node.callFrame);
    const up = parent.get(id);
    const stage = own ?? (up === undefined ? null : stageAt(up));
    memo.set(id, stage);
    return stage;
  };
  const us = Object.fromEntries(STAGES.map((s) => [s, 0])) as Record<Stage, number>;
  const unplaced = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i + 1] ?? 0;
    const frame = byId.get(id)?.callFrame;
    if (frame === undefined || frame.functionName === "(idle)") return;
    const stage = stageAt(id) ?? "other";
    us[stage] += dt;
    if (stage === "other") {
      const key = `${frame.functionName || "(anonymous)"} ${frame.url}`;
      unplaced.set(key, (unplaced.get(key) ?? 0) + dt);
    }
  });
  const out = Object.fromEntries(STAGES.map((s) => [s, us[s] / 1000 / searches])) as Record<
    Stage,
    number
  >;
  return {
    ...out,
    unplaced: [...unplaced.entries()].sort((a, b) => b[1] - a[1]).slice(0, 15),
  };
}

/** Profiles a warmed Node gateway child over one closed-loop window and splits its CPU. */
export async function profiledBreakdown(
  child: Child<Port>,
  spec: RequestSpec,
  concurrency: number,
  durationMs: number,
): Promise<Breakdown> {
  await child.request("profile-start");
  const before = cpuMs(child.pid);
  const load = await closedLoop(spec, concurrency, 0, durationMs);
  const processMs = (cpuMs(child.pid) - before) / load.sent;
  const profile = (await child.request("profile-stop")) as CpuProfile;
  const { unplaced, ...stageMs } = splitProfile(profile, load.sent);
  return { searches: load.sent, processMs, stageMs, unplaced };
}

/** One line per stage: ms per search and share of the sampled time, one column per breakdown. */
export function breakdownTable(breakdowns: Breakdown[], labels: string[]): string {
  const head = ["stage (Node, profiled)", ...labels];
  const cell = (b: Breakdown, stage: Stage) => {
    const total = STAGES.reduce((sum, s) => sum + b.stageMs[s], 0);
    const ms = b.stageMs[stage];
    return `${ms.toFixed(3)} ms (${(100 * ms / total).toFixed(1)}%)`;
  };
  const rows = [
    ...STAGES.map((stage) => [stage, ...breakdowns.map((b) => cell(b, stage))]),
    [
      "sampled main thread, per search",
      ...breakdowns.map((b) => `${STAGES.reduce((sum, s) => sum + b.stageMs[s], 0).toFixed(3)} ms`),
    ],
    ["process CPU under the profiler", ...breakdowns.map((b) => `${b.processMs.toFixed(3)} ms`)],
    ["searches profiled", ...breakdowns.map((b) => String(b.searches))],
  ];
  const widths = head.map((_, c) => Math.max(...[head, ...rows].map((r) => (r[c] ?? "").length)));
  const line = (r: string[]) => r.map((v, c) => v.padEnd(widths[c] ?? 0)).join(" | ").trimEnd();
  const out = [line(head), widths.map((w) => "-".repeat(w)).join("-|-"), ...rows.map(line)];
  if (process.env.BENCH_STAGES_DEBUG) {
    for (const [i, b] of breakdowns.entries()) {
      out.push(`\nleft as "other" in ${labels[i]}:`);
      for (const [key, t] of b.unplaced) out.push(`  ${(t / 1000).toFixed(1)} ms  ${key}`);
    }
  }
  return out.join("\n");
}
