/**
 * `cloudflare:workers`, the module workerd provides to a Worker at run time, typed as far as the
 * gateway uses it: the Durable Object base class and the SQLite-backed storage of
 * GatewayStateObject (state-object.ts). The worker build leaves the import as it is; nothing else
 * may import this module, since Node and Deno have none.
 */
declare module "cloudflare:workers" {
  /** The synchronous key-value API of a SQLite-backed object: each call is its own transaction. */
  export interface SyncKvStorage {
    get<T = unknown>(key: string): T | undefined;
    put(key: string, value: unknown): void;
    /** Whether the key existed. */
    delete(key: string): boolean;
    /** Entries in ascending key order (descending with `reverse`), from `start` inclusive. */
    list<T = unknown>(
      options?: { prefix?: string; start?: string; reverse?: boolean; limit?: number },
    ): Iterable<[string, T]>;
  }

  export interface DurableObjectStorage {
    readonly kv: SyncKvStorage;
    /** The alarm's time in epoch milliseconds, or null when none is set. */
    getAlarm(): Promise<number | null>;
    setAlarm(scheduledTime: number): Promise<void>;
    /** Deletes every key, and the alarm (compatibility date 2026-02-24 or later). */
    deleteAll(): Promise<void>;
  }

  export interface DurableObjectState {
    readonly storage: DurableObjectStorage;
  }

  /** Extending it exposes an object's public methods over RPC. */
  export abstract class DurableObject<Env = unknown> {
    protected ctx: DurableObjectState;
    protected env: Env;
    constructor(ctx: DurableObjectState, env: Env);
  }
}
