/**
 * Workers' parts for fetching pages. Workers have no DNS API and their fetch cannot be told which
 * address to connect to, so (docs/decisions.md, "Fetching pages on Workers"):
 * - a host name is resolved over DNS-over-HTTPS (the JSON form Cloudflare's and Google's resolvers
 *   answer), and every address of its A and AAAA answers is judged as on Node and Deno;
 * - the request then goes by name through the runtime's fetch, which resolves the name again: the
 *   connector says `pinsAddress: false`, and docs/security.md says what the platform enforces
 *   in that gap (subrequests leave Cloudflare's network for the public internet only);
 * - an address written in the URL is fetched as written: there is no name to resolve twice.
 */
import { readBounded } from "../io/bounded-reader.ts";
import { connectFailure } from "../evidence/connect-failure.ts";
import type { Connected, Connector, Resolved, Resolver } from "../evidence/fetch-types.ts";
import { MAX_DOH_ANSWER_BYTES } from "../protocol/fetch-limits.ts";

/** Cloudflare's resolver, which Workers reach without leaving its network. */
export const DEFAULT_DOH_URL = "https://cloudflare-dns.com/dns-query";

export type WorkerFetchOptions = {
  /** A DNS-over-HTTPS endpoint answering `?name=&type=` with `application/dns-json`. */
  dohUrl?: string;
  /** The runtime's fetch (the global one unless a test hands another). */
  fetch?: typeof fetch;
};

/** The resolver and connector the worker root hands to fetchEvidence. */
export function workerFetchParts(
  options: WorkerFetchOptions = {},
): { resolve: Resolver; connector: Connector } {
  const send = options.fetch ?? ((input, init) => fetch(input, init));
  return {
    resolve: dohResolver(options.dohUrl ?? DEFAULT_DOH_URL, send),
    connector: workerConnector(send),
  };
}

/** RFC 1035 record types of the answers kept: A and AAAA (CNAMEs are followed by the resolver). */
const A = 1;
const AAAA = 28;
/** RFC 1035 RCODE 3: the name does not exist. */
const NXDOMAIN = 3;

type DohAnswer = { Status?: unknown; Answer?: Array<{ type?: unknown; data?: unknown }> };

function dohResolver(endpoint: string, send: typeof fetch): Resolver {
  const ask = async (host: string, type: "A" | "AAAA", signal: AbortSignal) => {
    const url = new URL(endpoint);
    url.searchParams.set("name", host);
    url.searchParams.set("type", type);
    const response = await send(url, { headers: { accept: "application/dns-json" }, signal });
    const read = await readBounded(response.body, MAX_DOH_ANSWER_BYTES, null);
    if (!response.ok || !read.ok) throw new Error(`DNS-over-HTTPS answered ${response.status}`);
    return JSON.parse(new TextDecoder().decode(read.bytes)) as DohAnswer;
  };
  return async (host, signal): Promise<Resolved> => {
    try {
      const answers = await Promise.all([ask(host, "A", signal), ask(host, "AAAA", signal)]);
      const addresses: string[] = [];
      for (const answer of answers) {
        if (answer.Status !== 0 && answer.Status !== NXDOMAIN) {
          return { ok: false, reason: "dns_failure", message: `DNS failed for ${host}` };
        }
        for (const record of answer.Answer ?? []) {
          if ((record.type === A || record.type === AAAA) && typeof record.data === "string") {
            addresses.push(record.data);
          }
        }
      }
      return addresses.length > 0
        ? { ok: true, addresses }
        : { ok: false, reason: "no_address", message: `${host} has no address in DNS` };
    } catch {
      return { ok: false, reason: "dns_failure", message: `DNS-over-HTTPS failed for ${host}` };
    }
  };
}

function workerConnector(send: typeof fetch): Connector {
  return {
    pinsAddress: false,
    send: async ({ url, headers, signal }): Promise<Connected> => {
      try {
        const response = await send(url, { headers, redirect: "manual", signal });
        return {
          ok: true,
          status: response.status,
          headers: response.headers,
          body: response.body,
        };
      } catch (error) {
        return connectFailure(error, signal);
      }
    },
  };
}
