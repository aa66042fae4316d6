/**
 * The processes a run starts: the provider servers (one child for all of them), and per scenario a
 * gateway, a naive baseline and the single-fetch ceiling, each in its own child so its RSS and CPU
 * are its own. Also the sanity check every target must pass before it is measured.
 */
import { type Child, startChild } from "./children.ts";
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
} as const;

export const PROVIDER_SPECS: ProviderSpec[] = [
  ...GROUPS.slow8.map((name) => ({ name, scope: SCOPE, delayMs: 50, candidates: 50 })),
  ...[10, 30, 50].map((d) => ({ name: `first${d}`, scope: SCOPE, delayMs: d, candidates: 10 })),
  { name: "endless", scope: SCOPE, delayMs: 0, candidates: 0, endless: true },
  ...GROUPS.zero8.map((name) => ({ name, scope: SCOPE, delayMs: 0, candidates: 10 })),
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

export function startGateway(
  urls: Urls,
  names: readonly string[],
  execArgv: string[] = [],
): Promise<Child<Port>> {
  const manifest = {
    schema_version: "tracefetch.providers.v1",
    providers: pick(urls, names).map(({ name, url }) => ({
      name,
      scope: SCOPE,
      endpoint: url,
      timeout_seconds: 10,
    })),
  };
  return startChild("gateway", "./gateway-child.ts", {
    env: { BENCH_MANIFEST: JSON.stringify(manifest) },
    execArgv: ["--expose-gc", ...execArgv],
  });
}

export function startNaive(urls: Urls, names: readonly string[]): Promise<Child<Port>> {
  return startChild("naive", "./naive-gateway.ts", {
    env: { BENCH_NAIVE_PROVIDERS: JSON.stringify(pick(urls, names)) },
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
