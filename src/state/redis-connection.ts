/**
 * One connection of the gateway to Redis (the state's, or the answer cache's): a single server or a
 * Redis Cluster (redis-url.ts), through ioredis, with the scripts it runs defined once and every
 * failure turned into a StoreFailure whose reason names no URL, host, port, password or key.
 *
 * Invariants:
 * - A call fails at once while the connection is down (no offline queue, no retries of a command),
 *   and the client reconnects in the background; the first connection is waited for, once.
 * - A database index the server does not have is never silently database 0: every call fails, and
 *   `startProblem` says so in one line for the root to stop the start with.
 * - ioredis cannot withdraw a command once sent, so calls take no AbortSignal: the guard bounds the
 *   wait, and a command left behind is settled by REDIS_COMMAND_TIMEOUT_MS.
 */
import { Cluster, Redis, type RedisOptions } from "ioredis";
import {
  REDIS_COMMAND_TIMEOUT_MS,
  REDIS_CONNECT_TIMEOUT_MS,
  REDIS_QUIT_MS,
  REDIS_RECONNECT_FIRST_MS,
  REDIS_RECONNECT_MAX_MS,
} from "../protocol/state-limits.ts";
import type { RedisTarget } from "./redis-url.ts";
import { StoreFailure } from "./state-store.ts";

const reconnectDelay = (times: number) =>
  Math.min(REDIS_RECONNECT_FIRST_MS * 2 ** (times - 1), REDIS_RECONNECT_MAX_MS);

/** How every Redis client of the gateway connects: the state's, and the answer cache's. */
export const REDIS_OPTIONS = {
  // While disconnected a command fails at once: a queued one would only wait out the timeout.
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
  commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
  retryStrategy: reconnectDelay,
  // Every reply here is a string, an integer or an array, alike in RESP2 and RESP3; RESP2 needs
  // no HELLO, so servers before Redis 6 and proxies speak it too.
  protocol: 2,
  // Each command is written at once: a search's calls, started in one turn, leave together. Not
  // ioredis's auto-pipelining, which holds every command behind the batch still in flight, so
  // one search's (or a finished search's background writes) would cost the next a round trip.
  enableAutoPipelining: false,
} satisfies RedisOptions;

type ScriptCall = (...args: Array<string | number>) => Promise<unknown>;

export class RedisConnection {
  readonly client: Redis | Cluster;
  /** Settles once the first connection attempt has: ready, refused, or given up. */
  readonly #firstAttempt: Promise<void>;
  /** What went wrong with the connection since it was last ready (an error code), if anything. */
  #lastError: string | null = null;
  /** Set while the server refuses the database the URL names. */
  #missingDb = false;
  #closing: Promise<void> | null = null;

  constructor(private readonly target: RedisTarget, scripts: Record<string, string>) {
    this.client = target.kind === "single"
      ? new Redis(target.url, REDIS_OPTIONS)
      : new Cluster(target.nodes, {
        enableOfflineQueue: false,
        // ioredis's cluster pipelines check every key of a batch against one slot, and a script's
        // keys (given after their count) are taken for a batch's: each call is sent on its own.
        enableAutoPipelining: false,
        clusterRetryStrategy: reconnectDelay,
        slotsRefreshTimeout: REDIS_CONNECT_TIMEOUT_MS,
        redisOptions: {
          connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
          commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
          maxRetriesPerRequest: 0,
          protocol: 2,
          username: target.username,
          password: target.password,
          ...(target.tls ? { tls: {} } : {}),
        },
      });
    for (const [name, lua] of Object.entries(scripts)) this.client.defineCommand(name, { lua });
    // Listened to so that no error goes unhandled; the reason is told by the next failed call.
    this.client.on("error", (error: unknown) => {
      const message = error instanceof Error ? error.message : "";
      // A SELECT refused during the handshake is only an error event: the client goes ready.
      if (/^ERR (DB index is out of range|invalid DB index)/i.test(message)) this.#missingDb = true;
      this.#lastError = errorCode(error);
    });
    this.client.on("connect", () => (this.#missingDb = false));
    this.client.on("ready", () => (this.#lastError = null));
    this.#firstAttempt = new Promise<void>((resolve) => {
      for (const event of ["ready", "close", "end"]) this.client.once(event, () => resolve());
    });
  }

  /**
   * Why the gateway must not start over this connection, in one line, once the first attempt
   * settled; null when it may (a store that is down is not a reason: it may come back).
   */
  async startProblem(setting: string): Promise<string | null> {
    // Only a database other than 0 may be missing: no other URL waits for the first connection.
    if (this.target.kind !== "single" || this.target.db === 0) return null;
    await this.#firstAttempt;
    if (!this.#missingDb) return null;
    return `${setting} names database ${this.target.db}, which the Redis server does not have (it has databases 0 to its \`databases\` setting minus one)`;
  }

  /** Runs a script defined at construction, with the number of keys first. */
  script(name: string, keys: string[], args: Array<string | number>): Promise<unknown> {
    // defineCommand adds each script as a method; called with the number of keys first.
    const call = (this.client as unknown as Record<string, ScriptCall>)[name] as ScriptCall;
    return this.send(() => call.call(this.client, keys.length, ...keys, ...args));
  }

  /** One command; its failure as a StoreFailure. */
  async send<T>(command: () => Promise<T>): Promise<T> {
    if (this.#closing !== null) throw new StoreFailure("the store's connection was closed");
    await this.#firstAttempt;
    if (this.#missingDb && this.target.kind === "single") {
      throw new StoreFailure(`the store has no database ${this.target.db}`);
    }
    try {
      return await command();
    } catch (error) {
      throw new StoreFailure(this.#reason(error));
    }
  }

  /** Says QUIT when connected, waiting at most REDIS_QUIT_MS, then drops the connection. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      const { client } = this;
      if (client.status === "ready") {
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([
          client.quit().catch(() => undefined),
          new Promise<void>((resolve) => (timer = setTimeout(resolve, REDIS_QUIT_MS))),
        ]);
        clearTimeout(timer);
      }
      if (client.status !== "end") client.disconnect();
    })();
    return this.#closing;
  }

  /** Why a command failed, in words that name nothing of the store's address or secrets. */
  #reason(error: unknown): string {
    if (this.#closing !== null) return "the store's connection was closed";
    const message = error instanceof Error ? error.message : "";
    if (error instanceof Error && error.name === "ReplyError") return replyReason(message);
    if (message === "Command timed out") return "the store did not answer in time";
    if (/^Cluster isn't ready|^Failed to refresh slots cache/.test(message)) {
      return "the store's cluster is not reachable";
    }
    const code = this.#lastError ?? "";
    if (/^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED)/.test(code)) {
      return "the TLS handshake with the store failed";
    }
    return CONNECTION_REASONS[code] ?? "the store closed the connection";
  }
}

/** What a failed call is said to be, by the last error of the connection (none: it closed). */
const CONNECTION_REASONS: Record<string, string> = {
  ECONNREFUSED: "the store refused the connection",
  ETIMEDOUT: "the store did not accept the connection in time",
  ENOTFOUND: "the store's host name did not resolve",
  EAI_AGAIN: "the store's host name did not resolve",
  EHOSTUNREACH: "the store's network is unreachable",
  ENETUNREACH: "the store's network is unreachable",
  NOAUTH: "the store refused the credentials",
  WRONGPASS: "the store refused the credentials",
};

/**
 * An error's code (ECONNREFUSED), a Redis error's first word (WRONGPASS), or for a host tried at
 * several addresses (an AggregateError) or a cluster none of whose nodes answered, the first's.
 */
function errorCode(error: unknown): string | null {
  if (typeof error !== "object" || error === null) return null;
  const { code, message, errors, lastNodeError } = error as {
    code?: unknown;
    message?: unknown;
    errors?: unknown;
    lastNodeError?: unknown;
  };
  if (typeof code === "string") return code;
  if (Array.isArray(errors)) return errorCode(errors[0]);
  if (lastNodeError !== undefined) return errorCode(lastNodeError);
  return typeof message === "string" ? /^[A-Z]+/.exec(message)?.[0] ?? null : null;
}

function replyReason(message: string): string {
  if (/^(NOAUTH|WRONGPASS|NOPERM)/.test(message)) return "the store refused the credentials";
  if (message.startsWith("LOADING")) return "the store is still loading its data";
  if (message.startsWith("READONLY")) return "the store is a read-only replica";
  if (message.startsWith("OOM")) return "the store is out of memory";
  if (message.startsWith("CROSSSLOT")) return "the store refused keys of several cluster slots";
  if (message.startsWith("CLUSTERDOWN")) return "the store's cluster is down";
  return "the store answered with an error";
}

/**
 * A key whose hash tag is `tag`: every key of one script call shares its tag, so on a cluster all
 * of them are in one slot. The tag comes right after the prefix, so even a prefix with a `{` of its
 * own keeps the keys of one tag together.
 */
export function taggedKey(prefix: string, tag: string, rest: string): string {
  return `${prefix}{${tag}}:${rest}`;
}
