/**
 * `node --import tsx bench/eval/corpus-cpu.ts [FOLDER] [--rm3] [--workerd]`: what a search of the
 * corpus provider costs (docs/quality.md). In process: the provider over a judged collection
 * (Cranfield by default, 1,400 documents), every judged query searched once to warm up and then
 * five times at `limit` 10, the CPU of each `search` call read with `process.cpuUsage()`; p50 and
 * p90. With --workerd: the bundled worker in workerd through Miniflare, with the embedded
 * default's manifest (the `workspace` built-in over docs/ and the two example providers on
 * 127.0.0.1) and with the built-in alone, 800 searches after 50 to warm up, the workerd process's
 * CPU read from /proc (more than the isolate's own: it serves the HTTP exchange too).
 */
import { parseArgs } from "node:util";
import { corpusAdapter } from "../../providers/corpus/corpus-adapter.ts";
import { RM3 } from "../../providers/corpus/corpus-search.ts";
import { startEmbeddedDefault } from "../../providers/corpus/embedded-default.ts";
import { relevantCount } from "../../src/cli/replay/metrics.ts";
import { MAX_QUERY_CHARS } from "../../src/protocol/limits.ts";
import { listen } from "../../src/runtime/node-listen.ts";
import { startWorker } from "../../tests/workerd/miniflare.ts";
import { childPids, cpuMs } from "../cpu.ts";
import { loadCollection } from "./collection.ts";

/** Timed passes over the judged queries, after one to warm up. */
const PASSES = 5;
/** Searches of the worker: enough for the 10 ms resolution of /proc to average out. */
const WORKER_SEARCHES = 800;
const WORKER_WARM_UP = 50;
/** Queries a person or an agent might ask of this repository's docs/. */
const DOCS_QUERIES = [
  "deadline",
  "score group statistics",
  "how does the gateway fuse results from providers",
  "exit code",
  "rate lim",
  "suspension probe health",
  "what happens when a provider times out during a search",
  "aerodynamic",
];

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    rm3: { type: "boolean", default: false },
    workerd: { type: "boolean", default: false },
  },
});

const percentile = (sorted: readonly number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN;

async function inProcess(folder: string) {
  const collection = await loadCollection(folder);
  const before = process.cpuUsage();
  const adapter = corpusAdapter("corpus", "eval", collection.documents, {
    ...(values.rm3 ? { model: "bm25" as const, feedback: RM3 } : {}),
  });
  const built = process.cpuUsage(before);
  const queries = collection.queries
    .filter((q) => relevantCount(collection.qrels.get(q.id) ?? new Map()) > 0)
    .map((q) => q.text.slice(0, MAX_QUERY_CHARS));
  const signal = new AbortController().signal;
  const times: number[] = [];
  for (let pass = 0; pass <= PASSES; pass++) {
    for (const query of queries) {
      const start = process.cpuUsage();
      await adapter.search({ query, limit: 10 }, signal);
      const spent = process.cpuUsage(start);
      if (pass > 0) times.push((spent.user + spent.system) / 1000);
    }
  }
  times.sort((a, b) => a - b);
  console.log(
    `${collection.name}, ${collection.documents.length} documents${values.rm3 ? ", rm3" : ""}: ` +
      `index built in ${((built.user + built.system) / 1000).toFixed(0)} ms of CPU; ` +
      `CPU per search p50 ${percentile(times, 0.5).toFixed(3)} ms, p90 ${
        percentile(times, 0.9).toFixed(3)
      } ms over ${times.length} searches`,
  );
}

async function inWorkerd(embedded: boolean) {
  const running = embedded
    ? await startEmbeddedDefault((fetch, host, port) => listen(fetch, host, port))
    : null;
  const manifest = running?.manifest ??
    {
      schema_version: "tracefetch.providers.v1",
      providers: [{ name: "workspace", scope: "local" }],
    };
  const mf = await startWorker({
    TRACEFETCH_ALLOW_LOOPBACK: "1",
    TRACEFETCH_MANIFEST: JSON.stringify(manifest),
  }, { quiet: true });
  try {
    const [workerd] = childPids(process.pid, "workerd");
    if (workerd === undefined) throw new Error("Miniflare started no workerd process");
    const search = async (i: number) => {
      const q = encodeURIComponent(DOCS_QUERIES[i % DOCS_QUERIES.length] as string);
      const res = await mf.dispatchFetch(`http://gateway.test/v1/search?q=${q}`);
      const body = await res.json() as { code: string };
      if (body.code !== "ok") throw new Error(`a search answered ${body.code}`);
    };
    const first = cpuMs(workerd);
    await search(0);
    const firstMs = cpuMs(workerd) - first;
    for (let i = 0; i < WORKER_WARM_UP; i++) await search(i);
    const start = cpuMs(workerd);
    for (let i = 0; i < WORKER_SEARCHES; i++) await search(i);
    const perSearch = (cpuMs(workerd) - start) / WORKER_SEARCHES;
    console.log(
      `workerd, ${embedded ? "the embedded default" : "the workspace built-in alone"}: ` +
        `${perSearch.toFixed(2)} ms of the process's CPU per search over ${WORKER_SEARCHES}; ` +
        `the first search of the isolate ${firstMs.toFixed(0)} ms (10 ms resolution)`,
    );
  } finally {
    await mf.dispose();
    await running?.close();
  }
}

await inProcess(positionals[0] ?? "bench/eval/cranfield");
if (values.workerd) {
  await inWorkerd(true);
  await inWorkerd(false);
}
