/**
 * The processes a run starts: the provider servers (one child for all of them), and per scenario a
 * gateway, a naive baseline and the single-fetch ceiling, each in its own child so its RSS and CPU
 * are its own. Also the sanity check every target must pass before it is measured.
 */
import { fileURLToPath } from "node:url";
import { adoptPid, type Child, startChild, startCommand } from "./children.ts";
import { startFlags } from "./node-flags.ts";
import type { ProviderSpec } from "./provider-servers.ts";

export const SCOPE = "bench";

const range = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

/** Provider groups of the run, by the scenario that uses them. */
export const GROUPS = {
  slow8: range("slow", 8),
  first3: ["first10", "first30", "first50"],
  /** The endless provider, and a normal one to warm the gateway up with. */
  endless: ["endless", "zero0"],
  zero4: range("zero", 4),
  zero8: range("zero", 8),
  /** The CPU and throughput case: 4 zero-delay providers of 20 candidates each. */
  wide4: range("wide", 4),
} as const;

/** Candidates each `wide` provider answers: the size of the issue's 4-provider case. */
export const WIDE_CANDIDATES = 20;

/** Candidates each `slow` provider answers (the overhead measurement's 8 providers at 50 ms). */
export const SLOW_CANDIDATES = 20;

export const PROVIDER_SPECS: ProviderSpec[] = [
  ...GROUPS.slow8.map((name) => ({
    name,
    scope: SCOPE,
    delayMs: 50,
    candidates: SLOW_CANDIDATES,
  })),
  ...[10, 30, 50].map((d) => ({ name: `first${d}`, scope: SCOPE, delayMs: d, candidates: 10 })),
  { name: "endless", scope: SCOPE, delayMs: 0, candidates: 0, endless: true },
  ...GROUPS.zero8.map((name) => ({ name, scope: SCOPE, delayMs: 0, candidates: 10 })),
  ...GROUPS.wide4.map((name) => ({
    name,
    scope: SCOPE,
    delayMs: 0,
    candidates: WIDE_CANDIDATES,
  })),
];

export type Urls = Record<string, string>;
export type Port = { port: number };

export function startProviders(): Promise<Child<{ urls: Urls }>> {
  return startChild("providers", "./provider-servers.ts", {
    env: { BENCH_PROVIDER_SPECS: JSON.stringify(PROVIDER_SPECS) },
  });
}

function pick(urls: Urls, names: readonly string[]) {
  return names.map((name) => {
    const url = urls[name];
    if (url === undefined) throw new Error(`no provider ${name}`);
    return { name, url };
  });
}

function manifestOf(urls: Urls, names: readonly string[]) {
  return {
    schema_version: "tracefetch.providers.v1",
    providers: pick(urls, names).map(({ name, url }) => ({
      name,
      scope: SCOPE,
      endpoint: url,
      timeout_seconds: 10,
    })),
  };
}

/**
 * The gateway on Node. `tree` is another checkout of this repository whose gateway runs instead
 * (`npm run bench -- --compare DIR`: the same harness measures an older tree beside this one).
 */
export function startGateway(
  urls: Urls,
  names: readonly string[],
  execArgv: string[] = [],
  tree?: string,
): Promise<Child<Port>> {
  const file = tree === undefined ? "./gateway-child.ts" : `${tree}/bench/gateway-child.ts`;
  return startChild(tree === undefined ? "gateway" : "compared gateway", file, {
    env: { BENCH_MANIFEST: JSON.stringify(manifestOf(urls, names)) },
    execArgv: ["--expose-gc", ...startFlags(tree), ...execArgv],
  });
}

/** Deno in node_modules (the `deno` package), as `deno task dev` runs it. */
const DENO = fileURLToPath(new URL("../node_modules/deno/deno", import.meta.url));

/** The gateway on Deno: Deno.serve and Deno's fetch (bench/deno-gateway.ts). */
export function startDenoGateway(urls: Urls, names: readonly string[]): Promise<Child<Port>> {
  const script = fileURLToPath(new URL("./deno-gateway.ts", import.meta.url));
  // The flags of `deno task dev` (deno.json): request.signal fires only when the caller leaves.
  const flags = ["--allow-net", "--allow-env", "--allow-read", "--unstable-no-legacy-abort"];
  return startCommand("deno gateway", DENO, ["run", ...flags, script], {
    env: { BENCH_MANIFEST: JSON.stringify(manifestOf(urls, names)), NO_COLOR: "1" },
    readyTimeoutMs: 60_000,
  });
}

export type WorkerdInfo = Port & { workerd: number };

/** The gateway in workerd through Miniflare; `info.workerd` is workerd's own process id. */
export async function startWorkerdGateway(
  urls: Urls,
  names: readonly string[],
): Promise<Child<WorkerdInfo>> {
  const child = await startChild<WorkerdInfo>("workerd gateway", "./workerd-child.ts", {
    env: {
      BENCH_MANIFEST: JSON.stringify(manifestOf(urls, names)),
      WRANGLER_SEND_METRICS: "false",
    },
    readyTimeoutMs: 90_000,
  });
  adoptPid(child.info.workerd);
  return child;
}

export function startNaive(urls: Urls, names: readonly string[]): Promise<Child<Port>> {
  return startChild("naive", "./naive-gateway.ts", {
    env: { BENCH_NAIVE_PROVIDERS: JSON.stringify(pick(urls, names)) },
    execArgv: ["--expose-gc"],
  });
}

/** The relay over these providers (bench/relay-gateway.ts): one more process and hop, no work. */
export function startRelay(urls: Urls, names: readonly string[]): Promise<Child<Port>> {
  return startChild("relay", "./relay-gateway.ts", {
    env: { BENCH_RELAY_PROVIDERS: JSON.stringify(pick(urls, names)) },
    execArgv: ["--expose-gc"],
  });
}

export function startCeiling(urls: Urls, name: string): Promise<Child<Port>> {
  const [provider] = pick(urls, [name]);
  return startChild("ceiling", "./ceiling-gateway.ts", {
    env: { BENCH_CEILING_PROVIDER: JSON.stringify(provider) },
    execArgv: ["--expose-gc"],
  });
}

export function searchUrl(child: Child<Port>, params: Record<string, string>): string {
  return `http://127.0.0.1:${child.info.port}/v1/search?${new URLSearchParams(params)}`;
}

let searches = 0;

/**
 * Search URLs whose query differs on every call (`deadline 1`, `deadline 2`, ...), so no search is
 * ever served by another one in flight (docs/envelope.md, "Coalescing"): each costs a fan-out.
 */
export function distinctSearches(
  child: Child<Port>,
  params: Record<string, string>,
): () => string {
  const base = `http://127.0.0.1:${child.info.port}/v1/search?`;
  return () => `${base}${new URLSearchParams({ ...params, q: `${params.q} ${++searches}` })}`;
}

/** The body a gateway would POST to a provider, for timing a provider directly. */
export function providerRequest(limit: number): string {
  return JSON.stringify({
    schema_version: "tracefetch.provider-request.v1",
    action: "search",
    query: "deadline",
    limit,
  });
}

type Envelope = {
  ok?: boolean;
  code?: string;
  result?: { merged?: unknown[]; candidates?: Array<{ outcome: string }> };
  merged?: unknown[];
  candidates?: unknown[];
};

/** What a target answers: an envelope, the naive `{merged}`, or the ceiling's provider answer. */
export type Kind = "gateway" | "naive" | "ceiling";

/** Refuses to measure a target that does not answer the search correctly. */
export async function verify(kind: Kind, url: string, providers: number) {
  const res = await fetch(url);
  const body = (await res.json()) as Envelope;
  const merged = kind === "gateway"
    ? body.result?.merged
    : kind === "naive"
    ? body.merged
    : body.candidates;
  // view=merged leaves the attempts out; then `code: ok` alone says every provider succeeded.
  const attempts = body.result?.candidates;
  const good = res.status === 200 && (merged?.length ?? 0) > 0 &&
    (kind !== "gateway" ||
      (body.code === "ok" && (attempts === undefined ||
        (attempts.length === providers && attempts.every((a) => a.outcome === "success")))));
  if (!good) {
    throw new Error(
      `${kind} at ${url} answered ${res.status}: ${JSON.stringify(body).slice(0, 400)}`,
    );
  }
}
