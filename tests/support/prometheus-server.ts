/**
 * A real Prometheus (Debian's package) for the metrics acceptance test: started on a free loopback
 * port, scraping the targets it is given every second, and asked PromQL over its HTTP API.
 * It runs as every such server does (tests/support/daemon.ts): never past its test process.
 *
 * Invariants:
 * - Every wait is bounded: its start, its stop, each query, and `until`'s polling.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, installedPath, startDaemon } from "./daemon.ts";

/** What the suite says when there is no server to start. */
export const PROMETHEUS_MISSING =
  "prometheus is not installed (Debian: apt-get install --no-install-recommends prometheus)";

/** How long Prometheus may take to answer /-/ready: it starts in about a second here. */
const START_MS = 20_000;
/** How long it may take to exit once told to. */
const STOP_MS = 10_000;
/** The pause between polls of /-/ready or of a query. */
const POLL_MS = 250;

export type Prometheus = {
  url: string;
  /** The value of an instant PromQL query with one series or a scalar; null when it has none. */
  query: (promql: string) => Promise<number | null>;
  /** The number of series an instant query returns. */
  seriesCount: (promql: string) => Promise<number>;
  stop: () => Promise<void>;
};

/** The path of prometheus, on PATH or where Debian puts it; null when it is not installed. */
export function prometheusPath(): string | null {
  return installedPath("prometheus");
}

/** Starts Prometheus scraping `targets` (host:port, path /metrics) every second. */
export async function startPrometheus(targets: string[]): Promise<Prometheus> {
  const binary = prometheusPath();
  if (binary === null) throw new Error(PROMETHEUS_MISSING);
  const dir = await mkdtemp(join(tmpdir(), "tracefetch-prometheus-"));
  const config = join(dir, "prometheus.yml");
  await writeFile(
    config,
    [
      "global:",
      "  scrape_interval: 1s",
      "  evaluation_interval: 1s",
      "scrape_configs:",
      "  - job_name: tracefetch",
      "    static_configs:",
      `      - targets: [${targets.map((t) => JSON.stringify(t)).join(", ")}]`,
      "",
    ].join("\n"),
  );
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const args = [
    `--config.file=${config}`,
    `--storage.tsdb.path=${join(dir, "data")}`,
    `--web.listen-address=127.0.0.1:${port}`,
  ];
  let server;
  try {
    server = await startDaemon(binary, args, {
      what: `prometheus on port ${port}`,
      ready: () => ready(url),
      startMs: START_MS,
      stopMs: STOP_MS,
      pollMs: POLL_MS,
    });
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  const stop = async () => {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  };
  const instant = async (promql: string) => {
    const response = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`, {
      signal: AbortSignal.timeout(5_000),
    });
    const body = await response.json() as {
      status: string;
      data: { resultType: string; result: Array<{ value: [number, string] }> | [number, string] };
    };
    if (body.status !== "success") throw new Error(`query ${promql}: ${JSON.stringify(body)}`);
    return body.data;
  };
  return {
    url,
    stop,
    query: async (promql) => {
      const data = await instant(promql);
      if (data.resultType === "scalar") return Number((data.result as [number, string])[1]);
      const vector = data.result as Array<{ value: [number, string] }>;
      return vector.length === 0 ? null : Number(vector[0]?.value[1]);
    },
    seriesCount: async (promql) => {
      const data = await instant(promql);
      return Array.isArray(data.result) && data.resultType === "vector" ? data.result.length : 0;
    },
  };
}

/** Polls `read` until `ok` holds for its value or `withinMs` passes; returns the last value. */
export async function until<T>(
  read: () => Promise<T>,
  ok: (value: T) => boolean,
  withinMs: number,
): Promise<T> {
  const deadline = performance.now() + withinMs;
  let value = await read();
  while (!ok(value) && performance.now() < deadline) {
    await sleep(POLL_MS);
    value = await read();
  }
  return value;
}

async function ready(url: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/-/ready`, { signal: AbortSignal.timeout(1_000) });
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
