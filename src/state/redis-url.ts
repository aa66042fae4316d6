/**
 * What a Redis URL of the gateway (TRACEFETCH_STATE_URL, TRACEFETCH_CACHE_URL) names: one server,
 * `redis://` or `rediss://` (TLS) with a database index, or a Redis Cluster, `redis+cluster://` or
 * `rediss+cluster://` with one or more seed nodes, `host:port` separated by commas. Either may carry
 * a user and password (`redis://user:password@host:port`).
 *
 * Invariants:
 * - Parsing never throws and never echoes the text: null is the whole answer for a URL this
 *   gateway cannot use, and the settings say so without the value, which may hold a password.
 * - A cluster has one database, 0: a cluster URL naming another is refused.
 */

/** Redis's port when a URL names none. */
const DEFAULT_REDIS_PORT = 6379;
/** The highest database index a URL may name; the server says whether it has that many. */
const MAX_DB_INDEX = 2 ** 31 - 1;

export type RedisNode = { host: string; port: number };

export type RedisTarget =
  /** One server: the URL as ioredis reads it, and the database it selects (0 when none). */
  | { kind: "single"; url: string; db: number }
  /** A cluster, reached through its seed nodes. */
  | {
    kind: "cluster";
    nodes: RedisNode[];
    tls: boolean;
    username: string | undefined;
    password: string | undefined;
  };

const SCHEMES = {
  "redis:": { cluster: false, tls: false },
  "rediss:": { cluster: false, tls: true },
  "redis+cluster:": { cluster: true, tls: false },
  "rediss+cluster:": { cluster: true, tls: true },
} as const;

/** The schemes, as a message lists them. */
export const REDIS_SCHEMES_TEXT = "redis://, rediss://, redis+cluster:// or rediss+cluster://";

/** What `text` names, or null when it is no Redis URL this gateway can use. */
export function parseRedisUrl(text: string): RedisTarget | null {
  const match = /^([a-z+]+:)\/\/(?:([^@/]*)@)?([^/?#@]+)(\/[^?#]*)?(\?[^#]*)?$/i.exec(text);
  if (match === null) return null;
  const [, rawScheme, userinfo, hosts, path = "", query = ""] = match;
  const scheme = SCHEMES[(rawScheme as string).toLowerCase() as keyof typeof SCHEMES];
  if (scheme === undefined) return null;
  const db = dbIndex(path);
  if (db === null) return null;
  if (!scheme.cluster) {
    // One host; the URL parser checks it (brackets for IPv6, a port in range).
    const url = URL.canParse(text) ? new URL(text) : null;
    if (url === null || url.hostname === "" || (hosts as string).includes(",")) return null;
    return { kind: "single", url: text, db };
  }
  if (db !== 0 || query !== "") return null;
  const nodes: RedisNode[] = [];
  for (const part of (hosts as string).split(",")) {
    const node = nodeOf(part);
    if (node === null) return null;
    nodes.push(node);
  }
  const credentials = credentialsOf(userinfo);
  if (credentials === null) return null;
  return { kind: "cluster", nodes, tls: scheme.tls, ...credentials };
}

/** `/`, `/3` or nothing: the database index; null for anything else. */
function dbIndex(path: string): number | null {
  if (path === "" || path === "/") return 0;
  if (!/^\/\d{1,10}$/.test(path)) return null;
  const index = Number(path.slice(1));
  return index <= MAX_DB_INDEX ? index : null;
}

/** `host:port`, `host` or `[v6]:port`, as the URL parser reads a host. */
function nodeOf(part: string): RedisNode | null {
  if (part === "") return null;
  const url = URL.canParse(`redis://${part}`) ? new URL(`redis://${part}`) : null;
  if (url === null || url.hostname === "" || url.username !== "" || url.pathname !== "") {
    return null;
  }
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  return { host, port: url.port === "" ? DEFAULT_REDIS_PORT : Number(url.port) };
}

/** `user:password`, `:password` or nothing, percent-decoded. */
function credentialsOf(
  userinfo: string | undefined,
): { username: string | undefined; password: string | undefined } | null {
  if (userinfo === undefined || userinfo === "") {
    return { username: undefined, password: undefined };
  }
  const colon = userinfo.indexOf(":");
  const user = colon < 0 ? userinfo : userinfo.slice(0, colon);
  const password = colon < 0 ? undefined : userinfo.slice(colon + 1);
  try {
    return {
      username: user === "" ? undefined : decodeURIComponent(user),
      password: password === undefined ? undefined : decodeURIComponent(password),
    };
  } catch {
    return null;
  }
}
