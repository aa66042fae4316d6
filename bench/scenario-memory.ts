/**
 * (3) Memory against a provider whose body never ends. The gateway must stop reading at its
 * 2,000,000-byte cap and close the socket; the naive baseline never stops, so it is killed after
 * 3 s or at 512 MiB RSS, whichever comes first.
 */
import type { Child } from "./children.ts";
import { keepAliveAgent, timed } from "./http-client.ts";
import { readVm, resetPeak, sampleRss } from "./memory.ts";
import { type Row, verdict } from "./report.ts";
import { count, MiB, mib } from "./stats.ts";
import type { Agent } from "node:http";
import {
  distinctSearches,
  GROUPS,
  type Port,
  searchUrl,
  startGateway,
  startNaive,
  type Urls,
  verify,
} from "./targets.ts";
import type { EndlessSession } from "./provider-servers.ts";

const BYTES_TARGET = 2_000_000 + 64 * 1024;
const RSS_TARGET = 16 * MiB;
const NAIVE_MAX_MS = 3_000;
const NAIVE_MAX_RSS = 512 * MiB;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Providers = Child<{ urls: Urls }>;

/** Collects garbage in the child, then sets the baseline RSS and resets the kernel's peak. */
async function baseline(child: Child<Port>): Promise<{ rss: number; peakReset: boolean }> {
  await child.request("gc");
  await sleep(200);
  const peakReset = resetPeak(child.pid);
  return { rss: readVm(child.pid).rss, peakReset };
}

async function closedSession(providers: Providers, waitMs: number): Promise<EndlessSession> {
  const deadline = performance.now() + waitMs;
  for (;;) {
    const session = (await providers.request("endless-session")) as EndlessSession | null;
    if (session === null) throw new Error("the endless provider was never called");
    if (session.closed || performance.now() > deadline) return session;
    await sleep(10);
  }
}

/** Bytes the gateway's socket to the provider read (status line and headers included). */
export type SocketRead = { sockets: number; bytesRead: number; closed: boolean };

type Measured = {
  growth: number;
  session: EndlessSession;
  read: SocketRead;
  status: number;
  ms: number;
};

/** One search against the endless provider: the child's peak RSS over its baseline, and the bytes. */
async function oneSearch(
  gateway: Child<Port>,
  providers: Providers,
  url: () => string,
  agent: Agent,
  port: number,
): Promise<Measured> {
  const base = await baseline(gateway);
  await providers.request("endless-reset");
  await gateway.request("socket-mark");
  const sampler = sampleRss(gateway.pid, 10);
  const res = await timed({ url }, agent);
  const sampled = sampler.stop();
  const peak = base.peakReset ? Math.max(readVm(gateway.pid).hwm, sampled) : sampled;
  const session = await closedSession(providers, 2_000);
  const read = (await gateway.request("socket-read", port)) as SocketRead;
  return { growth: peak - base.rss, session, read, status: res.status, ms: res.ms };
}

async function gatewaySide(urls: Urls, providers: Providers) {
  const gateway = await startGateway(urls, GROUPS.endless);
  const agent = keepAliveAgent(1);
  try {
    // Warm-up with ordinary searches of the other provider: code compiled, pools open. The first
    // endless search is then the first to read a large body, so its growth is not hidden by
    // memory an earlier one left committed; the second shows the steady state.
    await verify("gateway", searchUrl(gateway, { q: "deadline", providers: "zero0" }), 1);
    const warm = distinctSearches(gateway, { q: "deadline", providers: "zero0" });
    for (let i = 0; i < 50; i++) await timed({ url: warm }, agent);
    const url = distinctSearches(gateway, { q: "deadline", providers: "endless" });
    const port = Number(new URL(urls.endless as string).port);
    const first = await oneSearch(gateway, providers, url, agent, port);
    const second = await oneSearch(gateway, providers, url, agent, port);
    const envelope = (await (await fetch(url())).json()) as {
      result?: { candidates?: Array<{ code?: string }> };
    };
    const code = envelope.result?.candidates?.[0]?.code ?? "unknown";
    return { first, second, code };
  } finally {
    agent.destroy();
    await gateway.stop();
  }
}

async function naiveSide(urls: Urls, providers: Providers) {
  const naive = await startNaive(urls, ["endless"]);
  try {
    const base = await baseline(naive);
    await providers.request("endless-reset");
    const caller = new AbortController();
    let answered = false;
    const started = performance.now();
    const pending = fetch(searchUrl(naive, { q: "deadline" }), { signal: caller.signal })
      .then(async (res) => {
        await res.arrayBuffer();
        answered = true;
      })
      .catch(() => {});
    let rss = base.rss;
    const sampler = sampleRss(naive.pid, 10, (now) => (rss = now));
    while (!answered && performance.now() - started < NAIVE_MAX_MS && rss < NAIVE_MAX_RSS) {
      await sleep(10);
    }
    const elapsed = performance.now() - started;
    const session = (await providers.request("endless-session")) as EndlessSession | null;
    const peak = sampler.stop();
    await naive.kill();
    caller.abort();
    await pending;
    return {
      growth: peak - base.rss,
      written: session?.written ?? Number.NaN,
      stoppedByItself: session?.closed === true,
      elapsed,
      hitRss: rss >= NAIVE_MAX_RSS,
    };
  } finally {
    await naive.kill();
  }
}

export async function memory(urls: Urls, providers: Providers): Promise<{
  rows: Row[];
  note: string;
}> {
  const { first, second, code } = await gatewaySide(urls, providers);
  const nv = await naiveSide(urls, providers);
  const why = nv.hitRss ? "at the 512 MiB RSS cap" : `after ${(nv.elapsed / 1000).toFixed(1)} s`;
  const bytes = (m: Measured) =>
    `${count(m.session.written)}${m.session.closed ? "" : " (socket still open)"}`;
  const read = (m: Measured) =>
    `${count(m.read.bytesRead)}${m.read.closed ? "" : " (socket still open)"}`;
  const closed = (m: Measured) =>
    m.session.closedAfterMs === null ? "never" : `${m.session.closedAfterMs.toFixed(1)} ms`;
  return {
    rows: [
      {
        measurement: "3 peak RSS growth, one search, endless provider [3]",
        gateway: mib(first.growth),
        naive: `${mib(nv.growth)}, killed ${why}`,
        reference: `2nd search ${mib(second.growth)}`,
        target: "<= 16.0 MiB",
        result: verdict(first.growth <= RSS_TARGET && second.growth <= RSS_TARGET),
      },
      {
        measurement: "3 bytes the endless provider wrote",
        gateway: bytes(first),
        naive: `${count(nv.written)}${nv.stoppedByItself ? "" : ", never stopped"}`,
        reference: `2nd search ${bytes(second)}`,
        target: `<= ${count(BYTES_TARGET)}`,
        result: verdict(
          [first, second].every((m) => m.session.closed && m.session.written <= BYTES_TARGET),
        ),
      },
      {
        measurement: "3 bytes the gateway's socket read (headers incl.)",
        gateway: read(first),
        naive: "n/a",
        reference: `2nd search ${read(second)}`,
        target: `<= ${count(BYTES_TARGET)}`,
        result: verdict(
          [first, second].every((m) => m.read.closed && m.read.bytesRead <= BYTES_TARGET),
        ),
      },
    ],
    note:
      `the gateway answered HTTP ${first.status} (attempt code ${code}) in ${
        first.ms.toFixed(1)
      } ms and closed the provider's socket ${
        closed(first)
      } after the provider started writing (2nd search: ${closed(second)}). ` +
      "The provider writes one 64 KiB chunk per millisecond; what it wrote includes chunks still " +
      "in socket buffers when the gateway closed, which the gateway's own socket counter " +
      "(undici's socket, seen through diagnostics_channel) never read. The first endless search " +
      "follows 50 ordinary ones; the 2nd shows the steady state. The naive gateway never " +
      `stopped reading by itself and was killed ${why}.`,
  };
}
