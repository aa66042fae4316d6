/**
 * Node's (and Deno's, through its Node compatibility) parts for fetching pages: a resolver over
 * node:dns that asks the DNS servers it is given (the system's otherwise), and a connector that
 * sends one request over undici to the checked address alone: the host name stays in the URL for
 * the Host header, TLS SNI and the certificate check, and the socket's lookup answers only the
 * address the gateway checked, so the name is never resolved a second time (DNS rebinding).
 */
import { promises as dns } from "node:dns";
import type { LookupFunction } from "node:net";
import { Agent, fetch as undiciFetch } from "undici";
import { connectFailure } from "../evidence/connect-failure.ts";
import type { Connected, Connector, Resolved, Resolver } from "../evidence/fetch-types.ts";
import { DNS_TIMEOUT_MS, DNS_TRIES } from "../protocol/fetch-limits.ts";

export type NodeFetchOptions = {
  /** DNS servers (`127.0.0.1:5353`, `[::1]:53`); absent, the system's. */
  dnsServers?: readonly string[];
  /** Certificate authorities (PEM) trusted instead of Node's bundled ones: an intranet's, a test's. */
  ca?: readonly string[];
};

/** The resolver and connector a Node or Deno root hands to fetchEvidence. */
export function nodeFetchParts(
  options: NodeFetchOptions = {},
): { resolve: Resolver; connector: Connector } {
  return { resolve: nodeResolver(options.dnsServers), connector: nodeConnector(options.ca) };
}

/** Answers that mean "no address of this family", not a failure. */
const NO_DATA = new Set(["ENODATA", "ENOTFOUND", "NOTFOUND", "NODATA"]);

function nodeResolver(servers: readonly string[] | undefined): Resolver {
  return async (host, signal): Promise<Resolved> => {
    // One resolver per name: cancel() stops every query of its resolver, and only this one's may stop.
    const resolver = new dns.Resolver({ timeout: DNS_TIMEOUT_MS, tries: DNS_TRIES });
    if (servers !== undefined && servers.length > 0) resolver.setServers([...servers]);
    const cancel = () => resolver.cancel();
    signal.addEventListener("abort", cancel, { once: true });
    try {
      const answers = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
      const addresses: string[] = [];
      let failure: string | null = null;
      for (const answer of answers) {
        if (answer.status === "fulfilled") addresses.push(...answer.value);
        else {
          const code = String((answer.reason as { code?: unknown }).code ?? "");
          if (!NO_DATA.has(code)) failure = code || "failed";
        }
      }
      if (addresses.length > 0) return { ok: true, addresses };
      if (failure !== null) {
        return { ok: false, reason: "dns_failure", message: `DNS failed for ${host} (${failure})` };
      }
      return { ok: false, reason: "no_address", message: `${host} has no address in DNS` };
    } finally {
      signal.removeEventListener("abort", cancel);
    }
  };
}

function nodeConnector(ca: readonly string[] | undefined): Connector {
  return {
    pinsAddress: true,
    send: async ({ url, address, headers, signal }): Promise<Connected> => {
      const family = address.includes(":") ? 6 : 4;
      // One agent per request: its one connection can only ever reach `address`.
      const agent = new Agent({
        connect: {
          ...(ca === undefined ? {} : { ca: [...ca] }),
          lookup: ((_host, options, done) =>
            options.all
              ? done(null, [{ address, family }])
              : done(null, address, family)) as LookupFunction,
        },
      });
      try {
        const response = await undiciFetch(url, {
          dispatcher: agent,
          redirect: "manual",
          headers: { ...headers },
          signal,
        });
        return {
          ok: true,
          status: response.status,
          headers: response.headers as unknown as Headers,
          body: response.body as ReadableStream<Uint8Array> | null,
        };
      } catch (error) {
        return connectFailure(error, signal);
      } finally {
        // Closing waits for the request in flight, its body included, then drops the connection.
        void agent.close().catch(() => {});
      }
    },
  };
}
