/**
 * The Redis adapter of the answer cache (answer-cache.ts), over a connection of its own to
 * TRACEFETCH_CACHE_URL (by default the state's Redis), so that an operator may give the cache a
 * database or an instance whose evictions never touch the state's keys (docs/deploy.md).
 *
 * Keys, each under the prefix and the provider's hash tag (one slot per provider on a cluster):
 * `{cache:<provider>}:generation`, the provider's generation (a random value that `invalidate`
 * replaces); `{cache:<provider>}:answer:<digest>`, one public provider's answer, `<generation>
 * <stored at, ms> <JSON>`, for its TTL, served only while its generation is the provider's. The
 * digest is HMAC-SHA-256 of the answer's identity under TRACEFETCH_STATE_SECRET: the store never
 * learns a query.
 *
 * Invariants:
 * - A generation is random, never a counter: one that lapsed or was evicted is replaced by a value
 *   no entry was stored under, so an old answer cannot come back.
 * - Each lookup is one round trip (the generation and the entry, in one script); ages are read at
 *   the store's clock. A failure or a timeout reads as a miss and stores nothing.
 */
import { CACHE_GENERATION_TTL_MS } from "../protocol/state-limits.ts";
import { RedisConnection, taggedKey } from "./redis-connection.ts";
import type { RedisTarget } from "./redis-url.ts";
import type { AnswerCache, CacheLookup, StoreCalls } from "./answer-cache.ts";
import { hex, type Hmac, type HmacPort, keyedHmac } from "../io/digests.ts";

/** The store's time in whole milliseconds, as text, so that no number is formatted by Lua. */
const NOW = `local t = redis.call('TIME')
local now = t[1] .. string.format('%03d', math.floor(tonumber(t[2]) / 1000))`;

/**
 * KEYS: the generation, and the entry (none for the generation alone); ARGV: a fresh generation,
 * its TTL. Answers {generation, now, entry or nil}.
 */
const LOOKUP = `local gen = redis.call('GET', KEYS[1])
if not gen then
  gen = ARGV[1]
  redis.call('SET', KEYS[1], gen, 'PX', ARGV[2])
end
${NOW}
if #KEYS < 2 then return {gen, now} end
return {gen, now, redis.call('GET', KEYS[2])}`;

/**
 * KEYS: the generation, the entry; ARGV: the generation read before the provider was asked, the
 * entry's TTL, the JSON, the generation's TTL. 1 when stored.
 */
const STORE = `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
${NOW}
redis.call('SET', KEYS[2], ARGV[1] .. ' ' .. now .. ' ' .. ARGV[3], 'PX', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1`;

type Call = (...args: Array<string | number>) => Promise<unknown>;

export type RedisCacheOptions = {
  /** TRACEFETCH_CACHE_URL, else TRACEFETCH_STATE_URL, parsed (redis-url.ts). */
  target: RedisTarget;
  /** The variable that named it, for a start problem's line. */
  setting?: string;
  /** TRACEFETCH_STATE_PREFIX. */
  prefix: string;
  /** TRACEFETCH_STATE_SECRET: the HMAC key of entries' digests. */
  secret: string;
  /**
   * The runtime's own HMAC-SHA-256 (node:crypto on Node and Deno), which answers at once: Web
   * Crypto's is a promise, on Node a trip through the thread pool for each of a search's providers.
   */
  mac?: HmacPort | undefined;
  /**
   * The instance's one guard (store-guard.ts): the shared state's, or the cache's alone when only
   * TRACEFETCH_CACHE_URL is set; either way its trouble shows as `shared_state`.
   */
  calls: StoreCalls;
};

export class RedisAnswerCache implements AnswerCache {
  readonly #redis: RedisConnection;
  #mac: Hmac | null = null;
  readonly #calls: StoreCalls;

  constructor(private readonly options: RedisCacheOptions) {
    this.#redis = new RedisConnection(options.target, {
      tracefetchCacheLookup: LOOKUP,
      tracefetchCacheStore: STORE,
    });
    this.#calls = options.calls;
  }

  /** Why the gateway must not start over this cache (redis-connection.ts), or null. */
  startProblem(): Promise<string | null> {
    return this.#redis.startProblem(this.options.setting ?? "TRACEFETCH_CACHE_URL");
  }

  async lookup(provider: string, identity: string | null, budgetMs?: number): Promise<CacheLookup> {
    const keys = [this.#key(provider, "generation")];
    if (identity !== null) keys.push(this.#key(provider, `answer:${await this.#hmac(identity)}`));
    const reply = await this.#run("tracefetchCacheLookup", keys, [
      hex(crypto.getRandomValues(new Uint8Array(16))),
      CACHE_GENERATION_TTL_MS,
    ], budgetMs);
    if (!Array.isArray(reply) || typeof reply[0] !== "string") {
      return { generation: null, found: null };
    }
    const generation = reply[0];
    // `<generation> <stored at> <JSON>`: an entry of an earlier generation is a miss.
    const raw: unknown = reply[2];
    if (typeof raw !== "string" || !raw.startsWith(`${generation} `)) {
      return { generation, found: null };
    }
    const rest = raw.slice(generation.length + 1);
    const space = rest.indexOf(" ");
    if (space < 0) return { generation, found: null };
    const ageMs = Math.max(0, Number(reply[1]) - Number(rest.slice(0, space)));
    return { generation, found: { text: rest.slice(space + 1), ageMs } };
  }

  async store(
    provider: string,
    identity: string,
    lookup: CacheLookup,
    text: string,
    ttlMs: number,
  ): Promise<void> {
    const { generation } = lookup;
    if (generation === null) return;
    const genKey = this.#key(provider, "generation");
    const entry = this.#key(provider, `answer:${await this.#hmac(identity)}`);
    await this.#run("tracefetchCacheStore", [genKey, entry], [
      generation,
      Math.max(1, Math.ceil(ttlMs)),
      text,
      CACHE_GENERATION_TTL_MS,
    ]);
  }

  async invalidate(provider: string): Promise<boolean> {
    const fresh = hex(crypto.getRandomValues(new Uint8Array(16)));
    const key = this.#key(provider, "generation");
    return await this.#run("set", [key], [fresh, "PX", CACHE_GENERATION_TTL_MS]) === "OK";
  }

  close(): Promise<void> {
    return this.#redis.close();
  }

  /** One of a provider's keys, under its hash tag. */
  #key(provider: string, rest: string): string {
    return taggedKey(this.options.prefix, `cache:${provider}`, rest);
  }

  /** One command within the timeout; null when it failed, timed out, or the store is left alone. */
  #run(
    name: string,
    keys: string[],
    args: Array<string | number>,
    budgetMs?: number,
  ): Promise<unknown> {
    return this.#calls.run(() => {
      if (name.startsWith("tracefetch")) return this.#redis.script(name, keys, args);
      // Plain commands take their key as an argument.
      const client = this.#redis.client as unknown as Record<string, Call>;
      const command = client[name] as Call;
      return this.#redis.send(() => command.call(client, ...keys, ...args));
    }, budgetMs);
  }

  /** An identity's digest in the store: HMAC-SHA-256 under the state's secret, in hex. */
  #hmac(identity: string): string | Promise<string> {
    this.#mac ??= keyedHmac(this.options.secret, "hex", this.options.mac);
    return this.#mac("answer", identity);
  }
}
