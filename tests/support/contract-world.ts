/**
 * What the API contract's cases may do to the world before they are sent (a case's `before`,
 * tests/support/contract-case.ts), all on the `full` gateway of tests/support/contract-gateways.ts:
 * hold its one in-flight slot or one body in reading, expire a locator, fetch a page into its
 * cache, cut its cache off from refreshes. Every wait is bounded and fails saying what never came.
 */
import type { createGateway } from "../../src/http/mod.ts";
import {
  type AnswerCache,
  type CacheLookup,
  MemoryAnswerCache,
} from "../../src/state/answer-cache.ts";
import { open } from "./raw-http.ts";
import type { TestServer } from "./servers.ts";
import { until } from "./until.ts";

export type World = {
  /** Starts a search on the full gateway that holds its one slot until `release()`. */
  holdSlot: () => Promise<{ release: () => Promise<void> }>;
  /** Holds one body of this client's in reading on the full gateway until `release()`. */
  holdBody: () => Promise<{ release: () => Promise<void> }>;
  /** The notes corpus reloads without "retries": the locator it issued is now expired. */
  forgetRetries: () => Promise<void>;
  /** POST /v1/fetch on the full gateway, straight: the result of its envelope. */
  fetchPage: (request: Record<string, unknown>) => Promise<FetchAnswer>;
  /** Fetches a page on the full gateway until its answer comes from the cache. */
  cachePage: (request: Record<string, unknown>) => Promise<void>;
  /** The full gateway's answer cache can no longer be told of a refresh, until the call it returns. */
  cacheUnreachable: () => Promise<() => Promise<void>>;
};

/** What a case reads of a fetch's result. */
export type FetchAnswer = {
  cached: boolean;
  receipt: string | null;
  evidence: { markdown: string };
};

/** How long a held search may take to reach its provider, on a loaded machine. */
const HOLD_MS = 10_000;

/** How often `cachePage` asks before it gives up: the cache is written after the answer. */
const CACHE_TRIES = 50;

/** The full gateway's answer cache: in memory, with a switch that makes its invalidation fail. */
export class SwitchedCache implements AnswerCache {
  readonly #inner = new MemoryAnswerCache(1_000_000, () => performance.now());
  reachable = true;
  lookup(provider: string, identity: string | null): Promise<CacheLookup> {
    return this.#inner.lookup(provider, identity);
  }
  store(p: string, identity: string, lookup: CacheLookup, text: string, ttlMs: number) {
    return this.#inner.store(p, identity, lookup, text, ttlMs);
  }
  invalidate(provider: string): Promise<boolean> {
    return this.reachable ? this.#inner.invalidate(provider) : Promise.resolve(false);
  }
}

/** What the `slow` provider's searches wait on: shut until opened, then shut again for the next. */
export class Gate {
  #open = opened();
  wait(): Promise<void> {
    return this.#open.promise;
  }
  open(): void {
    this.#open.resolve();
  }
  shut(): void {
    this.#open = opened();
  }
}

/** A promise and the function that resolves it (Node 20 has no Promise.withResolvers). */
function opened(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((r) => resolve = r);
  return { promise, resolve };
}

/** The world of the full gateway, its `slow` provider waiting on `gate`, behind `frontPort`. */
export function worldOf(parts: {
  full: Pick<ReturnType<typeof createGateway>, "request">;
  slow: TestServer;
  gate: Gate;
  cache: SwitchedCache;
  /** The listener in front of the gateways, and the header line that picks the full one. */
  frontPort: number;
  pickFull: string;
  forgetRetries: () => Promise<void>;
}): World {
  const { full, slow, gate, cache } = parts;
  let holds = 0;
  const world: World = {
    holdSlot: async () => {
      const searches = () => slow.requests.filter((r) => r.body.includes('"query"')).length;
      const seen = searches();
      // A query of its own each time: a search identical to the last held one could follow that
      // one's flight, whose end is written to the store after its answer, and never reach `slow`.
      let answered: string | null = null;
      const running = Promise.resolve(full.request(`/v1/search?q=held${++holds}&providers=slow`))
        .then((r) => r.text()).then((text) => void (answered = text));
      await until(
        () => searches() > seen || answered !== null,
        "a held search to reach its provider",
        HOLD_MS,
      );
      if (answered !== null) throw new Error(`the held search was answered at once: ${answered}`);
      return {
        release: async () => {
          gate.open();
          await running;
          gate.shut();
        },
      };
    },
    holdBody: async () => {
      const socket = await open(parts.frontPort);
      socket.write(
        `POST /v1/expand HTTP/1.1\r\nhost: 127.0.0.1\r\n${parts.pickFull}\r\n` +
          "content-type: application/json\r\ncontent-length: 100\r\n\r\n{",
      );
      // Held once the gateway has begun to read it.
      await new Promise((r) => setTimeout(r, 50));
      return { release: () => Promise.resolve(socket.destroy()).then(() => {}) };
    },
    cacheUnreachable: () => {
      cache.reachable = false;
      return Promise.resolve(() => Promise.resolve(void (cache.reachable = true)));
    },
    forgetRetries: parts.forgetRetries,
    fetchPage: async (request) => {
      const res = await full.request("/v1/fetch", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(request),
      });
      const envelope = await res.json();
      if (envelope.code !== "ok") throw new Error(`the page was not fetched: ${envelope.code}`);
      return envelope.result as FetchAnswer;
    },
    cachePage: async (request) => {
      for (let i = 0; i < CACHE_TRIES; i++) {
        if ((await world.fetchPage(request)).cached) return;
        await new Promise((r) => setTimeout(r, 10));
      }
      throw new Error(`${JSON.stringify(request)} never came from the cache`);
    },
  };
  return world;
}
