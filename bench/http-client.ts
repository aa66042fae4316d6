/**
 * The load client: node:http with keep-alive agents, timing each request from the call to the last
 * byte (and, for streams, to the first line that starts with a given prefix). Closed loop: each
 * worker sends its next request when the previous one is done, so the client never over-drives.
 */
import { Agent, request } from "node:http";

export type Timed = { status: number; ms: number; bytes: number; markMs: number | null };

export type RequestSpec = {
  /** A function gives each request its own URL (a distinct query, so no search joins another). */
  url: string | (() => string);
  method?: "GET" | "POST";
  body?: string;
  /** Records the time of the first NDJSON line that starts with this. */
  markLine?: string;
};

export function keepAliveAgent(sockets: number): Agent {
  return new Agent({ keepAlive: true, maxSockets: sockets, maxFreeSockets: sockets });
}

export function timed(spec: RequestSpec, agent: Agent): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const headers: Record<string, string | number> = {};
    if (spec.body !== undefined) {
      headers["content-type"] = "application/json";
      headers["content-length"] = Buffer.byteLength(spec.body);
    }
    const url = typeof spec.url === "string" ? spec.url : spec.url();
    const req = request(url, { method: spec.method ?? "GET", agent, headers }, (res) => {
      let bytes = 0;
      let markMs: number | null = null;
      let pending = "";
      res.on("data", (chunk: Buffer) => {
        bytes += chunk.length;
        if (spec.markLine === undefined || markMs !== null) return;
        const lines = (pending + chunk.toString("utf8")).split("\n");
        pending = lines.pop() ?? "";
        if (lines.some((line) => line.startsWith(spec.markLine as string))) {
          markMs = performance.now() - started;
        }
      });
      res.on(
        "end",
        () =>
          resolve({ status: res.statusCode ?? 0, ms: performance.now() - started, bytes, markMs }),
      );
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(spec.body);
  });
}

/** Several requests sent at once and timed together, to the last byte of the last answer. */
async function timedAll(specs: readonly RequestSpec[], agent: Agent): Promise<Timed> {
  const started = performance.now();
  const all = await Promise.all(specs.map((spec) => timed(spec, agent)));
  return {
    status: all.find((r) => r.status !== 200)?.status ?? 200,
    ms: performance.now() - started,
    bytes: all.reduce((sum, r) => sum + r.bytes, 0),
    markMs: null,
  };
}

/** One request, or (a list) several at once: a client doing the gateway's fan-out itself. */
export type Probe = RequestSpec | readonly RequestSpec[];

/**
 * Sequential requests to several targets in turn (a, b, a, b, ...), each on its own keep-alive
 * connections, so any background load on the machine falls on all of them alike. `warm` rounds are
 * not recorded. Returns one list per target.
 */
export async function interleaved(
  probes: readonly Probe[],
  warm: number,
  count: number,
): Promise<Timed[][]> {
  const agents = probes.map((p) => keepAliveAgent(Array.isArray(p) ? p.length : 1));
  const out = probes.map((): Timed[] => []);
  try {
    for (let i = 0; i < warm + count; i++) {
      for (const [j, probe] of probes.entries()) {
        const agent = agents[j] as Agent;
        const result = Array.isArray(probe)
          ? await timedAll(probe, agent)
          : await timed(probe as RequestSpec, agent);
        if (i >= warm) out[j]?.push(result);
      }
    }
    return out;
  } finally {
    for (const agent of agents) agent.destroy();
  }
}

/** `count` requests one after another, after `warm` unrecorded ones. */
export async function sequential(
  spec: RequestSpec,
  warm: number,
  count: number,
): Promise<Timed[]> {
  return (await interleaved([spec], warm, count))[0] as Timed[];
}

export type LoadResult = {
  rps: number;
  /** Answers that started and ended inside the counted time. */
  completed: number;
  /** Every request sent, warm-up and the ones crossing the end included: what the target served. */
  sent: number;
  errors: number;
  latencies: number[];
};

/**
 * `concurrency` workers in a closed loop: `warmMs` unrecorded, then `durationMs` counted. Pass an
 * agent to keep connections open across several windows; otherwise one is made and destroyed.
 */
export async function closedLoop(
  spec: RequestSpec,
  concurrency: number,
  warmMs: number,
  durationMs: number,
  shared?: Agent,
): Promise<LoadResult> {
  const agent = shared ?? keepAliveAgent(concurrency);
  const measureFrom = performance.now() + warmMs;
  const end = measureFrom + durationMs;
  const latencies: number[] = [];
  let errors = 0;
  let sent = 0;
  const worker = async () => {
    while (performance.now() < end) {
      sent++;
      const t0 = performance.now();
      let ok = false;
      try {
        ok = (await timed(spec, agent)).status === 200;
      } catch {
        ok = false;
      }
      const t1 = performance.now();
      if (t0 < measureFrom || t1 > end) continue;
      if (ok) latencies.push(t1 - t0);
      else errors++;
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    if (shared === undefined) agent.destroy();
  }
  return {
    rps: latencies.length / (durationMs / 1000),
    completed: latencies.length,
    sent,
    errors,
    latencies,
  };
}

/**
 * Searches a gateway serves before it is measured: V8 compiles the code a search runs on its
 * background threads over the first few hundred, and a gateway in service runs compiled code
 * (scenario 9 measured CPU per search after 50 searches at about twice its value after 1,000).
 */
export const STEADY_STATE_SEARCHES = 1_000;
/** One target's warm-up ends here even short of its count, so a slow target cannot stall a run. */
const STEADY_STATE_MAX_MS = 10_000;
/** Concurrent requests while warming: scenario 4's, so a 50 ms search warms in seconds. */
const WARM_CONCURRENCY = 16;

/** Brings each target to its steady state, one after another, answers unrecorded. */
export async function warmToSteadyState(specs: readonly RequestSpec[]): Promise<void> {
  for (const spec of specs) {
    const agent = keepAliveAgent(WARM_CONCURRENCY);
    try {
      const until = performance.now() + STEADY_STATE_MAX_MS;
      let sent = 0;
      while (sent < STEADY_STATE_SEARCHES && performance.now() < until) {
        sent += (await closedLoop(spec, WARM_CONCURRENCY, 0, 250, agent)).sent;
      }
    } finally {
      agent.destroy();
    }
  }
}
