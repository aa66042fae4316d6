/**
 * The client address: whom a request counts against where callers are bounded one by one (request
 * bodies in reading), worked out once per request and set on the context as `clientAddress`.
 *
 * Invariants:
 * - The peer is what the runtime's port says (the socket's address on Node and Deno,
 *   CF-Connecting-IP on Workers); X-Forwarded-For is read only when that peer is a trusted proxy
 *   (TRACEFETCH_TRUSTED_PROXIES), so a caller cannot name itself someone else.
 * - Behind trusted proxies the client is the rightmost X-Forwarded-For entry that is not one of
 *   them: entries to its left were written by whoever the proxies heard from, and may be made up.
 * - An IPv6 client counts by its /64 and an IPv4-mapped IPv6 address as its IPv4, so one host
 *   cannot be many clients by changing addresses or address family.
 * - An unknown peer (`app.request` in tests, a runtime that says nothing) is one shared client.
 */
import type { MiddlewareHandler } from "hono";
import { CLIENT_IPV6_PREFIX_BITS } from "../protocol/admission-limits.ts";
// Imported as a file, not through src/io/mod.ts: ipaddr.js is CommonJS (src/io/ip-rules.ts).
import { type CidrRange, hostKey, inRanges, parseHostAddress } from "../io/ip-rules.ts";
import type { PeerAddress } from "../config/gateway-config.ts";
import type { GatewayEnv } from "./caller-middleware.ts";

/** The one client every request of an unknown address counts as. */
export const UNKNOWN_CLIENT = "unknown";

/** Sets `clientAddress` on the context, for every route after it. */
export function clientAddressMiddleware(config: {
  peerAddress: PeerAddress;
  trustedProxies: readonly CidrRange[];
}): MiddlewareHandler<GatewayEnv> {
  return async (c, next) => {
    const peer = config.peerAddress(c.req.raw, c.env);
    const forwarded = c.req.header("x-forwarded-for") ?? null;
    c.set("clientAddress", clientAddress(peer, forwarded, config.trustedProxies));
    await next();
  };
}

/**
 * The client a request counts as: an IPv4 address (`192.0.2.7`), an IPv6 /64
 * (`2001:db8:1:2::/64`), or UNKNOWN_CLIENT.
 */
export function clientAddress(
  peer: string | null,
  forwardedFor: string | null,
  trusted: readonly CidrRange[],
): string {
  let client = peer === null ? null : parseHostAddress(peer);
  if (client === null) return UNKNOWN_CLIENT;
  if (forwardedFor !== null && inRanges(client, trusted)) {
    const hops = forwardedFor.split(",");
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = parseHostAddress(hops[i] as string);
      // Not an address: nothing left of it can be trusted; the proxy that wrote it is the client.
      if (hop === null) break;
      client = hop;
      if (!inRanges(hop, trusted)) break;
    }
  }
  return hostKey(client, CLIENT_IPV6_PREFIX_BITS);
}
