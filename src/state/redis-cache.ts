/**
 * The Redis adapter of the answer cache (answer-cache.ts), over a connection of its own to
 * TRACEFETCH_CACHE_URL (by default the state's Redis), so that an operator may give the cache a
 * database or an instance whose evictions never touch the state's keys (docs/deploy.md).
 *
 * Keys, each under the prefix: `cache-gen:<provider>`, the provider's generation (a random value
 * that `invalidate` replaces); `cache:<provider>:<generation>:<digest>`, one public provider's
 * answer, `<stored at, ms> <JSON>`, for its TTL. The digest is HMAC-SHA-256 of the answer's
 * identity under TRACEFETCH_STATE_SECRET: the store never learns a query.
 *
 * Invariants:
 * - An answer that is not shared (a provider that is not public or receives gateway tokens) is
 *   never written here: it stays in this instance's LRU, under the generation read from Redis, so
 *   a refresh on any instance drops it too.
 * - A generation is random, never a counter: one that lapsed or was evicted is replaced by a value
 *   no entry was stored under, so an old answer cannot come back.
 * - Each lookup is one round trip (the generation and the entry, in one script); ages are read at
 *   the store's clock. A failure or a timeout reads as a miss and stores nothing.
 */
import { Redis } from "ioredis";
import { CACHE_GENERATION_TTL_MS } from "../protocol/state-limits.ts";
import { REDIS_OPTIONS } from "./redis-state.ts";
import { type AnswerCache, AnswerLru, CacheCalls, type CacheLookup } from "./answer-cache.ts";
import { hex, hmacHex, sha256Hex } from "./digests.ts";

/** The store's time in whole milliseconds, as text, so that no number is formatted by Lua. */
const NOW = `local t = redis.call('TIME')
local now = t[1] .. string.format('%03d', math.floor(tonumber(t[2]) / 1000))`;

/**
 * KEYS[1] the generation; ARGV: a fresh generation, its TTL, the entries' key base, the digest
 * ('' for the generation alone). Answers {generation, now, entry or nil}.
 */
const LOOKUP = `local gen = redis.call('GET', KEYS[1])
if not gen then
  gen = ARGV[1]
  redis.call('SET', KEYS[1], gen, 'PX', ARGV[2])
end
${NOW}
if ARGV[4] == '' then return {gen, now} end
return {gen, now, redis.call('GET', ARGV[3] .. gen .. ':' .. ARGV[4])}`;

/**
 * KEYS[1] the generation; ARGV: the generation read before the provider was asked, the entries'
 * key base, the digest, the entry's TTL, the JSON, the generation's TTL. 1 when stored.
 */
const STORE = `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
${NOW}
redis.call('SET', ARGV[2] .. ARGV[1] .. ':' .. ARGV[3], now .. ' ' .. ARGV[5], 'PX', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[6])
return 1`;

type Call = (...args: Array<string | number>) => Promise<unknown>;

export type RedisCacheOptions = {
  /** TRACEFETCH_CACHE_URL, else TRACEFETCH_STATE_URL. */
  url: string;
  /** TRACEFETCH_STATE_PREFIX. */
  prefix: string;
  /** TRACEFETCH_STATE_SECRET: the HMAC key of entries' digests. */
  secret: string;
  /**
   * The same HMAC, computed at once by the runtime (node:crypto on Node and Deno): Web Crypto's
   * is a promise, on Node a trip through the thread pool for each of a search's providers.
   */
  hmac?: ((identity: string) => string) | undefined;
  /** TRACEFETCH_STATE_TIMEOUT_MS: how long one operation may take before it reads as a miss. */
  timeoutMs: number;
  /** TRACEFETCH_CACHE_MAX_BYTES: this instance's LRU of answers that are not shared. */
  maxBytes: number;
  now: () => number;
};

export class RedisAnswerCache implements AnswerCache {
  readonly #client: Redis;
  readonly #local: AnswerLru;
  readonly #ready: Promise<void>;
  #mac: ((text: string) => Promise<string>) | null = null;
  readonly #calls: CacheCalls;

  constructor(private readonly options: RedisCacheOptions) {
    this.#client = new Redis(options.url, {
      ...REDIS_OPTIONS,
      // A search's lookups start in one turn: sent as one write, answered in one read.
      enableAutoPipelining: true,
    });
    this.#client.defineCommand("tracefetchCacheLookup", { lua: LOOKUP });
    this.#client.defineCommand("tracefetchCacheStore", { lua: STORE });
    // Listened to so that no error goes unhandled; a failed call reads as a miss.
    this.#client.on("error", () => {});
    this.#ready = new Promise<void>((resolve) => {
      for (const event of ["ready", "close", "end"]) this.#client.once(event, () => resolve());
    });
    this.#local = new AnswerLru(options.maxBytes, options.now);
    this.#calls = new CacheCalls(options.timeoutMs, options.now);
  }

  async lookup(provider: string, identity: string, shared: boolean): Promise<CacheLookup> {
    const digest = shared ? await this.#hmac(identity) : "";
    const reply = await this.#run("tracefetchCacheLookup", [this.#genKey(provider)], [
      hex(crypto.getRandomValues(new Uint8Array(16))),
      CACHE_GENERATION_TTL_MS,
      this.#entryBase(provider),
      digest,
    ]);
    if (!Array.isArray(reply) || typeof reply[0] !== "string") {
      return { generation: null, found: null };
    }
    const generation = reply[0];
    if (!shared) {
      const key = `${provider}:${generation}:${await this.#localKey(identity)}`;
      return { generation, found: this.#local.get(key) };
    }
    const raw: unknown = reply[2];
    const space = typeof raw === "string" ? raw.indexOf(" ") : -1;
    if (typeof raw !== "string" || space < 0) return { generation, found: null };
    const ageMs = Math.max(0, Number(reply[1]) - Number(raw.slice(0, space)));
    return { generation, found: { text: raw.slice(space + 1), ageMs } };
  }

  async store(
    provider: string,
    identity: string,
    lookup: CacheLookup,
    text: string,
    ttlMs: number,
    shared: boolean,
  ): Promise<void> {
    const { generation } = lookup;
    if (generation === null) return;
    const genKey = this.#genKey(provider);
    if (!shared) {
      // Kept only if no refresh replaced the generation since the lookup.
      const now = await this.#run("get", [genKey], []);
      if (now !== generation) return;
      this.#local.set(`${provider}:${generation}:${await this.#localKey(identity)}`, text, ttlMs);
      return;
    }
    await this.#run("tracefetchCacheStore", [genKey], [
      generation,
      this.#entryBase(provider),
      await this.#hmac(identity),
      Math.max(1, Math.ceil(ttlMs)),
      text,
      CACHE_GENERATION_TTL_MS,
    ]);
  }

  async invalidate(provider: string): Promise<void> {
    const fresh = hex(crypto.getRandomValues(new Uint8Array(16)));
    await this.#run("set", [this.#genKey(provider)], [fresh, "PX", CACHE_GENERATION_TTL_MS]);
  }

  async close(): Promise<void> {
    if (this.#client.status === "ready") await this.#client.quit().catch(() => undefined);
    if (this.#client.status !== "end") this.#client.disconnect();
  }

  #genKey(provider: string): string {
    return `${this.options.prefix}cache-gen:${provider}`;
  }

  #entryBase(provider: string): string {
    return `${this.options.prefix}cache:${provider}:`;
  }

  /** One command within the timeout; null when it failed, timed out, or the store is left alone. */
  #run(name: string, keys: string[], args: Array<string | number>): Promise<unknown> {
    return this.#calls.run(async () => {
      await this.#ready;
      const command = (this.#client as unknown as Record<string, Call>)[name] as Call;
      // Scripts take the number of keys first; plain commands take their key as an argument.
      const head = name.startsWith("tracefetch") ? [keys.length, ...keys] : keys;
      return await command.call(this.#client, ...head, ...args);
    });
  }

  /** The key of an answer kept in this instance's memory: any digest of fixed size will do. */
  #localKey(identity: string): string | Promise<string> {
    return this.options.hmac?.(identity) ?? sha256Hex(identity);
  }

  /** An identity's digest in the store: HMAC-SHA-256 under the state's secret, in hex. */
  #hmac(identity: string): string | Promise<string> {
    if (this.options.hmac !== undefined) return this.options.hmac(identity);
    this.#mac ??= hmacHex(this.options.secret);
    return this.#mac(identity);
  }
}
