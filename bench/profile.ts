/**
 * `npm run bench -- --profile`: CPU profiles of the gateway child for the unloaded 4-provider case
 * and the throughput case, summarised as the functions with the most self time. Profiling slows the
 * gateway down, so these runs are separate from the measured ones and print no targets.
 */
import { fileURLToPath } from "node:url";
import { closedLoop, sequential } from "./http-client.ts";
import {
  distinctSearches,
  GROUPS,
  searchUrl,
  startGateway,
  type Urls,
  verify,
  WIDE_CANDIDATES,
} from "./targets.ts";
import { CONCURRENCY } from "./scenario-throughput.ts";
import type { CallFrame, CpuProfile } from "./cpu-profile.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

function where(frame: CallFrame): string {
  let url = frame.url.replace(/^file:\/\//, "");
  if (url.startsWith(ROOT)) url = url.slice(ROOT.length);
  url = url.replace(/^.*node_modules\//, "node_modules/");
  if (url === "") return "";
  // Code transformed by tsx reports line 0 for every function: the file alone is then the truth.
  return frame.lineNumber > 0 ? `${url}:${frame.lineNumber + 1}` : url;
}

const SPECIAL = new Set(["(idle)", "(program)", "(garbage collector)", "(root)"]);

/** The `top` functions by self time, as a share of the time the gateway was not idle. */
export function topSelfTime(profile: CpuProfile, top = 12): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let busy = 0;
  let idle = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i + 1] ?? 0;
    const frame = byId.get(id)?.callFrame;
    if (frame === undefined) return;
    if (frame.functionName === "(idle)") {
      idle += dt;
      return;
    }
    busy += dt;
    const name = frame.functionName || "(anonymous)";
    const key = SPECIAL.has(name) ? name : `${name}  ${where(frame)}`.trimEnd();
    self.set(key, (self.get(key) ?? 0) + dt);
  });
  const line = ([key, us]: [string, number]) =>
    `${(us / 1000).toFixed(1).padStart(8)} ms ${(100 * us / busy).toFixed(1).padStart(5)}%  ${key}`;
  const ranked = (m: Map<string, number>, n: number) =>
    [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, n).map(line);
  // The same self time summed by file: which layer (ours, Hono, undici, Node) the time is spent in.
  const byFile = new Map<string, number>();
  for (const [key, us] of self) {
    const file = key.split("  ")[1]?.replace(/:\d+$/, "") ?? key;
    byFile.set(file, (byFile.get(file) ?? 0) + us);
  }
  return [
    `busy ${(busy / 1000).toFixed(0)} ms, idle ${(idle / 1000).toFixed(0)} ms; ` +
    "self time by function, share of busy:",
    ...ranked(self, top),
    "self time by file:",
    ...ranked(byFile, 10),
  ].join("\n");
}

async function profiled(
  urls: Urls,
  work: (url: () => string) => Promise<unknown>,
): Promise<string> {
  const gateway = await startGateway(urls, GROUPS.wide4);
  try {
    const params = { q: "deadline", limit: String(WIDE_CANDIDATES) };
    await verify("gateway", searchUrl(gateway, params), 4);
    const url = distinctSearches(gateway, params);
    await sequential({ url }, 200, 0);
    await gateway.request("profile-start");
    await work(url);
    return topSelfTime((await gateway.request("profile-stop")) as CpuProfile);
  } finally {
    await gateway.stop();
  }
}

export async function profileRun(urls: Urls): Promise<string> {
  const unloaded = await profiled(urls, (url) => sequential({ url }, 0, 300));
  const loaded = await profiled(urls, (url) => closedLoop({ url }, CONCURRENCY, 0, 5_000));
  return [
    "CPU profile of the gateway child: 300 sequential searches, 4 zero-delay providers x 20",
    unloaded,
    "",
    `CPU profile of the gateway child: concurrency ${CONCURRENCY} for 5 s, 4 zero-delay providers x 20`,
    loaded,
  ].join("\n");
}
