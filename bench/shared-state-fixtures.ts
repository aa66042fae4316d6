/**
 * What the shared-state and answer-cache scenarios (scenario-shared-state.ts,
 * scenario-answer-cache.ts) run against: their gateways, started as `npm start` starts them over a
 * Redis or over none; one provider server whose providers answer until told to fail, noting when each was contacted and
 * when the gateway's probe was refused; and a read of every key the gateways left in Redis, with
 * its TTL, through Debian's redis-cli (ioredis is for src/state/redis-state.ts alone).
 */
import { execFile } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { DEFAULT_CONFORMANCE_QUERY } from "../src/protocol/limits.ts";
import { redisServerPath } from "../tests/support/redis-server.ts";
import { startServer } from "../tests/support/servers.ts";
import { answerBody, candidates } from "./payload.ts";
import { type SoakGateway, startGateway } from "./soak-gateway.ts";
import { SCOPE } from "./targets.ts";

/** Hashes searches before they reach the store; a benchmark's store holds nothing to protect. */
const BENCH_STATE_SECRET = "bench secret, 32 bytes or longer!";

/**
 * A gateway over the manifest's providers, with Redis at `redis` or with no store at all; `extra`
 * goes into the manifest beside them (`caller_limits`), `env` into its variables.
 */
export function storeGateway(
  providers: ReadonlyArray<Record<string, unknown>>,
  redis: string | null,
  extra: Record<string, unknown> = {},
  env: Record<string, string> = {},
): Promise<SoakGateway> {
  const manifest = { schema_version: "tracefetch.providers.v1", providers, ...extra };
  return startGateway({
    HOST: "127.0.0.1",
    PORT: "0",
    TRACEFETCH_MANIFEST: JSON.stringify(manifest),
    TRACEFETCH_ALLOW_LOOPBACK: "1",
    TRACEFETCH_API_DOCS: "0",
    // Empty, so a store in the caller's own environment never reaches the gateway without one.
    TRACEFETCH_STATE_URL: redis ?? "",
    TRACEFETCH_STATE_SECRET: redis === null ? "" : BENCH_STATE_SECRET,
    ...env,
  });
}

/** The gateway's probe starts right after the fifth failure and is refused within milliseconds. */
const PROBE_WAIT_MS = 5_000;
/** How often `probedAt` looks: finer than a search on loopback takes, so it adds nothing visible. */
const PROBE_POLL_MS = 1;
/** Candidates a provider answers while it works: as many as each bench provider (targets.ts). */
const CANDIDATES = 10;
/** redis-cli answers one script over loopback in milliseconds; past this the store is stuck. */
const REDIS_CLI_TIMEOUT_MS = 10_000;

/**
 * One server for every provider of the trials (`/flaky/<name>`): a search is answered until its
 * provider is told to fail, then refused with a 503 and no wait asked for (retryable: five
 * failures set off the gateway's probe, whose failure suspends it). A describe gets 404, as from a
 * provider written before describe existed.
 */
export async function flakyProviders() {
  const failing = new Set<string>();
  /** When each caller's search of a provider arrived (the gateway's probes are not counted). */
  const contacts = new Map<string, number[]>();
  /** When the gateway's probe of a failing provider was answered. */
  const probed = new Map<string, number>();
  const server = await startServer((req, res, body) => {
    const name = (req.url ?? "").slice("/flaky/".length);
    const call = JSON.parse(body) as { action?: string; query?: string };
    if (call.action !== "search") return void res.writeHead(404).end("{}");
    const probe = call.query === DEFAULT_CONFORMANCE_QUERY;
    if (!probe) contacts.set(name, [...contacts.get(name) ?? [], performance.now()]);
    if (!failing.has(name)) {
      res.writeHead(200, { "content-type": "application/json" });
      return void res.end(answerBody(name, SCOPE, candidates(name, CANDIDATES)));
    }
    if (probe) res.once("finish", () => probed.set(name, performance.now()));
    res.writeHead(503, { "content-type": "application/json" }).end("{}");
  });
  return {
    endpoint: (name: string) => `http://127.0.0.1:${server.port}/flaky/${name}`,
    fail: (name: string) => void failing.add(name),
    /** Callers' searches of `name` that arrived after `since` (performance.now()). */
    contactsAfter: (name: string, since: number) =>
      (contacts.get(name) ?? []).filter((t) => t > since).length,
    /** When the gateway's probe of `name` was refused: then the gateway suspends it. */
    async probedAt(name: string): Promise<number> {
      const giveUp = performance.now() + PROBE_WAIT_MS;
      while (!probed.has(name)) {
        if (performance.now() > giveUp) throw new Error(`no probe of ${name} reached it`);
        await new Promise((resolve) => setTimeout(resolve, PROBE_POLL_MS));
      }
      return probed.get(name) as number;
    },
    close: () => server.close(),
  };
}

export type FlakyProviders = Awaited<ReturnType<typeof flakyProviders>>;

/** Every key under `prefix` with its PTTL in ms (-1: no TTL), and DBSIZE, as Redis saw them. */
export type StoreKeys = { dbsize: number; ttl: Map<string, number> };

/** redis-cli beside redis-server (Debian ships both in one install); null when it is missing. */
export function redisCliPath(): string | null {
  const server = redisServerPath();
  if (server === null) return null;
  const cli = join(dirname(server), "redis-cli");
  try {
    accessSync(cli, constants.X_OK);
    return cli;
  } catch {
    return null;
  }
}

/** Commands the server ran since it started (INFO commandstats), every kind summed. */
export async function commandsRun(cli: string, port: number): Promise<number> {
  const { stdout } = await promisify(execFile)(
    cli,
    ["-h", "127.0.0.1", "-p", String(port), "INFO", "commandstats"],
    { timeout: REDIS_CLI_TIMEOUT_MS },
  );
  let calls = 0;
  for (const match of stdout.matchAll(/^cmdstat_[^:]+:calls=(\d+)/gm)) calls += Number(match[1]);
  return calls;
}

/** The keys and their TTLs in one script, so all are read at the same moment of the store. */
export async function storeKeys(cli: string, port: number, prefix: string): Promise<StoreKeys> {
  const script = "local out = { redis.call('DBSIZE') } " +
    "for _, k in ipairs(redis.call('KEYS', ARGV[1])) do " +
    "out[#out + 1] = k; out[#out + 1] = redis.call('PTTL', k) end return out";
  const { stdout } = await promisify(execFile)(
    cli,
    ["-h", "127.0.0.1", "-p", String(port), "EVAL", script, "0", `${prefix}*`],
    { timeout: REDIS_CLI_TIMEOUT_MS },
  );
  // Not a terminal: one reply element per line, and no key of the gateway holds a newline.
  const [dbsize, ...rest] = stdout.trim().split("\n");
  const ttl = new Map<string, number>();
  for (let i = 0; i + 1 < rest.length; i += 2) ttl.set(rest[i] as string, Number(rest[i + 1]));
  return { dbsize: Number(dbsize), ttl };
}
